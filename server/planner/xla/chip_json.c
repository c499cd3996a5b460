/*
 * chip_json.c - the one JSON form of a chip-table record, for every output that shows one.
 */
#include <string.h>

#include "planner/chip.h"
#include "planner/jsonw.h"

void chip_json_write(struct jsonw *w, const struct chip *c)
{
    jsonw_str(w, "name", c->name);
    jsonw_arr_begin(w, "aliases");
    for (const char *p = c->aliases != NULL ? c->aliases : ""; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0)
            jsonw_strn(w, NULL, p, n);
        p += n + (p[n] == ',');
    }
    jsonw_arr_end(w);
    jsonw_str(w, "device_kind", c->device_kind);
    jsonw_i64(w, "generation", c->generation);
    jsonw_bool(w, "default", c == chip_default());
    jsonw_u64(w, "hbm_bytes_per_chip", c->hbm_bytes_per_chip);
    jsonw_u64(w, "hbm_bytes_per_device", c->hbm_bytes_per_device);
    jsonw_u64(w, "usable_hbm_bytes", c->usable_hbm_bytes);
    jsonw_u64(w, "hbm_bw_bytes_per_s", c->hbm_bw_bytes_per_s);
    jsonw_u64(w, "vmem_bytes_per_core", c->vmem_bytes);
    jsonw_u64(w, "smem_bytes_per_core", c->smem_bytes);
    jsonw_u64(w, "cmem_bytes_per_chip", c->cmem_bytes);
    jsonw_i64(w, "tensorcores_per_chip", c->tensorcores_per_chip);
    jsonw_i64(w, "tensorcores_per_device", c->tensorcores_per_device);
    jsonw_i64(w, "mxu_dim", c->mxu_dim);
    jsonw_i64(w, "mxus_per_core", c->mxus_per_core);
    jsonw_double(w, "peak_bf16_flops", c->peak_bf16_flops);
    if (c->peak_int8_ops > 0)
        jsonw_double(w, "peak_int8_ops", c->peak_int8_ops);
    else
        jsonw_null(w, "peak_int8_ops"); /* not published */
    jsonw_str(w, "ici_topology", c->ici_topology);
    if (c->scoped_vmem_default != 0)
        jsonw_u64(w, "scoped_vmem_default_bytes", c->scoped_vmem_default);
    else
        jsonw_null(w, "scoped_vmem_default_bytes"); /* unknown */
    jsonw_str(w, "default_layout", (c->uncertain & CHIP_F_LAYOUT) ? "assumed" : "confirmed");
    jsonw_arr_begin(w, "uncertain");
    for (unsigned bit = 1; bit <= CHIP_F_LAST; bit <<= 1)
        if (c->uncertain & bit)
            jsonw_str(w, NULL, chip_field_name(bit));
    jsonw_arr_end(w);
    jsonw_str(w, "notes", c->notes != NULL ? c->notes : "");
}
