#!/usr/bin/env python3
"""slowloris.py SRC HOST PORT CONNS SECONDS - many half-sent requests from one address.

Keeps CONNS connections open from source address SRC (a loopback alias such as 127.0.0.2, so
the soak's other clients on 127.0.0.1 keep their own per-IP quota): each sends the start of
a plan submission's headers, then one more header byte every 2 s, never finishing; a
connection the server closes is opened again at the next tick. Runs for SECONDS and prints
one line:
  opened N closed_by_server N open_at_end N longest_s S
where longest_s is the longest any one connection stayed open (the server's header
deadline should bound it; the per-IP connection limit closes the surplus at once).
"""
import socket
import sys
import time


def main():
    src, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    conns, secs = int(sys.argv[4]), float(sys.argv[5])
    start = b"POST /api/v1/plans HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nX-Slow: " % host.encode()
    socks = {}  # socket -> time opened
    opened = closed = 0
    longest = 0.0
    end = time.monotonic() + secs

    def open_one():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.bind((src, 0))
            s.connect((host, port))
            s.sendall(start)
            s.setblocking(False)
            socks[s] = time.monotonic()
            return 1
        except OSError:
            s.close()
            return 0

    while time.monotonic() < end:
        while len(socks) < conns and time.monotonic() < end:
            if not open_one():
                break
            opened += 1
        time.sleep(min(2.0, max(0.0, end - time.monotonic())))
        now = time.monotonic()
        for s in list(socks):
            try:
                # A closed peer shows as a readable socket with no data, or a send error.
                try:
                    if s.recv(1) == b"":
                        raise OSError("closed")
                except BlockingIOError:
                    pass
                s.send(b"x")
            except OSError:
                closed += 1
                longest = max(longest, now - socks.pop(s))
                s.close()
    now = time.monotonic()
    for s, t in socks.items():
        longest = max(longest, now - t)
        s.close()
    print("opened %d closed_by_server %d open_at_end %d longest_s %.1f" % (opened, closed, len(socks), longest))


if __name__ == "__main__":
    main()
