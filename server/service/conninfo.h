/*
 * conninfo.h - a database URL or libpq conninfo as it may be shown in a log: every
 * password masked.
 *
 * libpq takes two forms (PostgreSQL's documentation, "Connection Strings"):
 *   - a URI, postgresql:// or postgres://, with an optional user:password@ before the host
 *     and key=value parameters after "?" (separated by "&", percent-encoded);
 *   - key=value pairs separated by blanks, a value either bare or in single quotes, with
 *     backslash escapes in both.
 * Anything else (no "=") is a database name. The secrets are the password and sslpassword
 * (the client key's passphrase): their values become "***"; everything else is kept as
 * written.
 *
 * A password may hold any character: percent-encoded, as libpq wants, or (carelessly) raw,
 * "@", ":", "/" and "?" included. So in a URI the user information runs from the first ":"
 * to the LAST "@": a raw "@" in a password is masked with it, and a URI whose only "@" is
 * in its query (?user=a@b) after a host:port loses more than its password, never less. A
 * key=value conninfo that does not parse has everything from where it stops parsing masked.
 * Pure: no I/O, no state.
 */
#ifndef TPUPLAN_CONNINFO_H
#define TPUPLAN_CONNINFO_H

/* The masked form of conninfo (malloc'd, caller frees), or NULL when out of memory. */
char *conninfo_masked(const char *conninfo);

#endif
