/*
 * test_kernel.c - VMEM planning of Pallas kernels (kernel.h) through plan_run and
 * directly: exact VMEM bytes worked out by hand (matmul tilings, bf16/int8/int4 odd
 * shapes, single-buffered whole arrays, 1-D blocks, scalars, SMEM and semaphores taking no
 * VMEM), the blocked-matmul traffic formula of Pallas-matmul
 * (server/planner/SOURCES.md#vmem-estimate), limits and
 * XLA's E1001 text, the exact raised limit, properties of the block suggestions (they fit,
 * are tile-aligned and are the largest), and every input error naming its field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <json-c/json.h>

#include "planner/chip.h"
#include "planner/kernel.h"
#include "planner/plan.h"

#include "jpath.h"
#include "plan_doc.h"
#include "rng.h"

#define MIB (1024ull * 1024ull)

/* Plans a model text; fails the test on error. *fits gets the summary's fit. */
static json_object *plan(const char *text, bool *fits)
{
    struct plan_summary s;
    json_object *doc = plan_doc(text, strlen(text), NULL, &s);

    if (fits != NULL)
        *fits = s.fits;
    return doc;
}

/* A blocked matmul x[m,k] @ y[k,n] -> o[m,n] with grid (m/bm, n/bn, k/bk), as in
 * Pallas-matmul, with an f32 accumulator scratch. */
static char *matmul(const char *chip, int64_t m, int64_t k, int64_t n, int64_t bm, int64_t bk,
                    int64_t bn, const char *dt, const char *odt)
{
    static char buf[2048];
    snprintf(buf, sizeof(buf),
             "{\"chip\":\"%s\",\"tensors\":[],\"kernels\":[{\"name\":\"matmul\","
             "\"grid\":[%lld,%lld,%lld],\"flops\":%lld,"
             "\"inputs\":[{\"name\":\"x\",\"block\":[%lld,%lld],\"array\":[%lld,%lld],"
             "\"dtype\":\"%s\",\"index_map\":[0,2]},"
             "{\"name\":\"y\",\"block\":[%lld,%lld],\"array\":[%lld,%lld],\"dtype\":\"%s\","
             "\"index_map\":[2,1]}],"
             "\"outputs\":[{\"name\":\"o\",\"block\":[%lld,%lld],\"array\":[%lld,%lld],"
             "\"dtype\":\"%s\",\"index_map\":[0,1]}],"
             "\"scratch\":[{\"name\":\"acc\",\"shape\":[%lld,%lld],\"dtype\":\"f32\"}]}]}",
             chip, (long long)(m / bm), (long long)(n / bn), (long long)(k / bk),
             (long long)2 * bm * bn * bk, (long long)bm, (long long)bk, (long long)m, (long long)k,
             dt, (long long)bk, (long long)bn, (long long)k, (long long)n, dt, (long long)bm,
             (long long)bn, (long long)m, (long long)n, odt, (long long)bm, (long long)bn);
    return buf;
}

/* Matmul tilings: VMEM by hand, and the traffic formula of Pallas-matmul
 * (server/planner/SOURCES.md#vmem-estimate):
 * (m.k.n/bn + k.n.m/bm) x input size + m.n x output size. */
static void test_matmul_vmem_and_traffic(void **state)
{
    static const struct {
        int64_t m, k, n, bm, bk, bn;
    } cases[] = {
        {2048, 2048, 2048, 512, 512, 512},
        {4096, 1024, 2048, 256, 512, 512},
        /* bk = k: x's block stays put while j runs, so Pallas skips its copies (3b) and x
         * moves once, m.k instead of the formula's m.k.n/bn */
        {4096, 1024, 2048, 256, 1024, 512},
        {1024, 4096, 1024, 128, 256, 1024},
    };
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t m = cases[i].m, k = cases[i].k, n = cases[i].n;
        int64_t bm = cases[i].bm, bk = cases[i].bk, bn = cases[i].bn;
        json_object *r = plan(matmul("v6e", m, k, n, bm, bk, bn, "bf16", "f32"), NULL);
        /* aligned blocks: 2 buffers x bf16 x and y, 2 x f32 o, 1 x f32 acc */
        int64_t vmem = 2 * bm * bk * 2 + 2 * bk * bn * 2 + 2 * bm * bn * 4 + bm * bn * 4;
        int64_t traffic = (m * k * n / bn + k * n * m / bm) * 2 + m * n * 4;
        if (bk == k)
            traffic = (m * k + k * n * m / bm) * 2 + m * n * 4;
        assert_int_equal(jint(r, "kernels[0].vmem_bytes"), vmem);
        assert_int_equal(jint(r, "kernels[0].scratch_bytes"), bm * bn * 4);
        assert_int_equal(jint(r, "kernels[0].traffic.total_bytes"), traffic);
        assert_int_equal(jint(r, "kernels[0].traffic.steps"), (m / bm) * (n / bn) * (k / bk));
        assert_int_equal(jint(r, "kernels[0].operands[2].transfers"), (m / bm) * (n / bn));
        assert_int_equal(jint(r, "kernels[0].vmem_limit_bytes"), 32 * MIB); /* v6e, 1f */
        assert_int_equal(jint(r, "kernels[0].physical_vmem_bytes"), 128 * MIB);
        assert_true(jbool(r, "kernels[0].fits"));
        assert_int_equal(jint(r, "kernels[0].headroom_bytes"), (int64_t)(32 * MIB) - vmem);
        /* roofline: 2.m.n.k flops against the traffic, v6e per TensorCore (one core) */
        double flops = 2.0 * (double)m * (double)n * (double)k;
        double cs = flops / 918e12, ms = (double)traffic / 1.6e12;
        assert_float_equal(json_object_get_double(jget(r, "kernels[0].intensity")),
                           flops / (double)traffic, 1e-3 * flops / (double)traffic);
        assert_string_equal(jstr(r, "kernels[0].roofline.binding"),
                            cs >= ms ? "compute" : "memory");
        json_object_put(r);
    }
}

/* Odd shapes in every width: each block pads to (8 x 32/bits) rows and 128 lanes, which
 * makes all four exactly 16 KiB (server/planner/SOURCES.md#block-shapes). */
static void test_odd_shapes_by_width(void **state)
{
    const char *text =
        "{\"chip\":\"v5e\",\"tensors\":[],\"kernels\":[{\"name\":\"odd\",\"grid\":[3],"
        "\"inputs\":["
        "{\"name\":\"f\",\"block\":[9,129],\"dtype\":\"f32\",\"index_map\":[null,null]},"
        "{\"name\":\"h\",\"block\":[17,200],\"dtype\":\"bf16\",\"index_map\":[0,null]},"
        "{\"name\":\"q\",\"block\":[33,130],\"dtype\":\"s8\",\"index_map\":[0,null]},"
        "{\"name\":\"p\",\"block\":[2,65,129],\"dtype\":\"s4\",\"index_map\":[null,0,null]}]}]}";
    json_object *r = plan(text, NULL);
    static const int64_t padded[4][2] = {{16, 256}, {32, 256}, {64, 256}, {128, 256}};
    static const int64_t logical[4] = {9 * 129 * 4, 17 * 200 * 2, 33 * 130, 2 * 65 * 129 / 2};
    char path[96];
    (void)state;

    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "kernels[0].operands[%d].padded_block_bytes", i);
        assert_int_equal(jint(r, path), i == 3 ? 2 * 16384 : 16384);
        snprintf(path, sizeof(path), "kernels[0].operands[%d].block_bytes", i);
        assert_int_equal(jint(r, path), logical[i]);
        snprintf(path, sizeof(path), "kernels[0].operands[%d].padded_block[%d]", i, i == 3 ? 1 : 0);
        assert_int_equal(jint(r, path), padded[i][0]);
        snprintf(path, sizeof(path), "kernels[0].operands[%d].buffers", i);
        assert_int_equal(jint(r, path), 2);
    }
    assert_int_equal(jint(r, "kernels[0].vmem_bytes"), 2 * (16384 * 3 + 2 * 16384));
    /* the int4 block is labelled (not in Pallas-details' dtype list, 3a) */
    assert_non_null(strstr(jstr(r, "kernels[0].warnings[0]"), "4-bit"));
    /* f has a constant index: one transfer; h, q, p move every step */
    assert_int_equal(jint(r, "kernels[0].operands[0].transfers"), 1);
    assert_int_equal(jint(r, "kernels[0].operands[1].transfers"), 3);
    assert_int_equal(jint(r, "kernels[0].operands[1].hbm_bytes"), 3 * 17 * 200 * 2);
    /* the bf16 block's padding is put to use by (32, 256) */
    json_object *sg = jget(r, "kernels[0].suggestions");
    bool found = false;
    for (size_t i = 0; i < json_object_array_length(sg); i++) {
        json_object *s = json_object_array_get_idx(sg, i);
        if (strcmp(jstr(s, "operand"), "h") == 0) {
            found = true;
            assert_string_equal(jstr(s, "kind"), "align");
            assert_int_equal(jint(s, "block[0]"), 32);
            assert_int_equal(jint(s, "block[1]"), 256);
            assert_int_equal(jint(s, "saves_bytes"), 2 * (16384 - 17 * 200 * 2));
        }
    }
    assert_true(found);
    json_object_put(r);
}

/* Whole-array blocks with a constant index map get one buffer (Pallas' lowering, 3b); a
 * given count wins; 1-D blocks pad to 1024 elements; scalars take 512 B; SMEM and
 * semaphore scratch and ANY operands take no VMEM. */
static void test_buffers_1d_scalars_and_spaces(void **state)
{
    const char *text =
        "{\"chip\":\"v5e\",\"tensors\":[],\"kernels\":[{\"name\":\"k\",\"grid\":[4],"
        "\"inputs\":["
        "{\"name\":\"w\",\"block\":[8,128],\"array\":[8,128],\"dtype\":\"f32\"},"
        "{\"name\":\"w2\",\"block\":[8,128],\"array\":[8,128],\"dtype\":\"f32\","
        "\"index_map\":[null,null]},"
        "{\"name\":\"w3\",\"block\":[8,128],\"array\":[8,128],\"dtype\":\"f32\",\"buffers\":2},"
        "{\"name\":\"v\",\"block\":[100],\"dtype\":\"f32\",\"index_map\":[0]},"
        "{\"name\":\"big\",\"block\":[4096,4096],\"dtype\":\"f32\",\"memory_space\":\"any\"},"
        "{\"name\":\"ids\",\"block\":[64],\"dtype\":\"s32\",\"memory_space\":\"smem\"},"
        "{\"name\":\"m\",\"block\":[8,128],\"dtype\":\"pred\",\"index_map\":[0,null]}],"
        "\"scratch\":[{\"name\":\"s\",\"shape\":[],\"dtype\":\"f32\"},"
        "{\"name\":\"sm\",\"shape\":[1024],\"dtype\":\"s32\",\"memory_space\":\"smem\"},"
        "{\"name\":\"sem\",\"shape\":[2],\"memory_space\":\"semaphore\"}]}]}";
    json_object *r = plan(text, NULL);
    (void)state;

    assert_int_equal(jint(r, "kernels[0].operands[0].buffers"), 1);
    assert_string_equal(jstr(r, "kernels[0].operands[0].buffers_source"), "whole_array");
    assert_int_equal(jint(r, "kernels[0].operands[0].transfers"), 1);
    assert_int_equal(jint(r, "kernels[0].operands[1].buffers"), 1);
    assert_int_equal(jint(r, "kernels[0].operands[2].buffers"), 2);
    assert_string_equal(jstr(r, "kernels[0].operands[2].buffers_source"), "given");
    /* 1-D: 100 -> 1024 elements x 4 B, double-buffered */
    assert_int_equal(jint(r, "kernels[0].operands[3].padded_block[0]"), 1024);
    assert_int_equal(jint(r, "kernels[0].operands[3].vmem_bytes"), 2 * 4096);
    assert_int_equal(jint(r, "kernels[0].operands[3].waste_bytes"), 2 * (4096 - 400));
    assert_int_equal(jint(r, "kernels[0].operands[4].vmem_bytes"), 0);
    assert_int_equal(jint(r, "kernels[0].operands[4].hbm_bytes"), 0);
    assert_int_equal(jint(r, "kernels[0].operands[5].vmem_bytes"), 0);
    /* bool refs are int32 in VMEM (2c): 4 KiB for 1 KiB of data */
    assert_int_equal(jint(r, "kernels[0].operands[6].padded_block_bytes"), 4096);
    assert_int_equal(jint(r, "kernels[0].operands[6].block_bytes"), 1024);
    assert_int_equal(jint(r, "kernels[0].operands[7].vmem_bytes"), 512);
    assert_int_equal(jint(r, "kernels[0].operands[8].vmem_bytes"), 0);
    assert_int_equal(jint(r, "kernels[0].operands[9].vmem_bytes"), 0);
    assert_int_equal(jint(r, "kernels[0].vmem_bytes"),
                     4096 + 4096 + 2 * 4096 + 2 * 4096 + 2 * 4096 + 512);
    assert_int_equal(jint(r, "kernels[0].scratch_bytes"), 512);
    json_object_put(r);
}

/* An input block of rows x 128 f32 (2 buffers = rows KiB) on chip, with an optional
 * limit and margin. */
static char *rows_kernel(const char *chip, int64_t rows, int64_t limit, int64_t margin)
{
    static char buf[512];
    int n = snprintf(buf, sizeof(buf),
                     "{\"chip\":\"%s\",\"tensors\":[],\"kernels\":[{\"name\":\"fa\",\"grid\":[2],"
                     "\"inputs\":[{\"name\":\"x\",\"block\":[%lld,128],\"dtype\":\"f32\","
                     "\"index_map\":[0,null]}]",
                     chip, (long long)rows);
    if (limit > 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, ",\"vmem_limit_bytes\":%lld",
                      (long long)limit);
    if (margin > 0)
        n += snprintf(buf + n, sizeof(buf) - (size_t)n, ",\"internal_scratch_bytes\":%lld",
                      (long long)margin);
    snprintf(buf + n, sizeof(buf) - (size_t)n, "}]}");
    return buf;
}

/* The two scoped-limit errors quoted in server/planner/SOURCES.md#vmem-errors, reproduced
 * exactly by kernels of
 * those sizes: XLA's text, the plan not fitting, and the raised limit. */
static void test_e1001_text_and_limits(void **state)
{
    bool fits = true;
    json_object *r = plan(rows_kernel("v5e", 31816, 0, 0), &fits);
    (void)state;

    assert_false(fits);
    assert_false(jbool(r, "summary.fits"));
    assert_true(jbool(r, "summary.hbm_fits"));
    assert_int_equal(jint(r, "summary.kernels_over_limit"), 1);
    assert_int_equal(jint(r, "kernels[0].vmem_bytes"), 31816 * 1024);
    assert_int_equal(jint(r, "kernels[0].overflow_bytes"), (31816 - 16384) * 1024);
    assert_string_equal(jstr(r, "kernels[0].error"),
                        "E1001 CompileTimeScopedVmemOom: kernel \"fa\": Ran out of memory in "
                        "memory space vmem. Scoped allocation with size 31.07M and limit 16.00M "
                        "exceeded scoped vmem limit by 15.07M.");
    /* raised limit: exact bytes, and N KiB strictly above it (1f) */
    assert_string_equal(jstr(r, "kernels[0].suggestions[1].kind"), "raise_limit");
    assert_int_equal(jint(r, "kernels[0].suggestions[1].vmem_limit_bytes"), 31816 * 1024);
    assert_int_equal(jint(r, "kernels[0].suggestions[1].xla_tpu_scoped_vmem_limit_kib"), 31817);
    /* the largest block that fits, halving 31816 rows in steps of the 8-row tile: 15904 */
    assert_string_equal(jstr(r, "kernels[0].suggestions[0].kind"), "blocks");
    assert_int_equal(jint(r, "kernels[0].suggestions[0].blocks[0].block[0]"), 15904);
    assert_int_equal(jint(r, "kernels[0].suggestions[0].vmem_bytes"), 15904 * 1024);
    json_object_put(r);

    r = plan(rows_kernel("v6e", 38112, 0, 0), &fits);
    assert_false(fits);
    assert_string_equal(jstr(r, "kernels[0].error"),
                        "E1001 CompileTimeScopedVmemOom: kernel \"fa\": Ran out of memory in "
                        "memory space vmem. Scoped allocation with size 37.22M and limit 32.00M "
                        "exceeded scoped vmem limit by 5.22M.");
    json_object_put(r);

    /* the fix of tpu-inference #3407: a 64 MiB limit */
    r = plan(rows_kernel("v6e", 38112, 64 * MIB, 0), &fits);
    assert_true(fits);
    assert_string_equal(jstr(r, "kernels[0].limit_source"), "kernel");
    assert_int_equal(jint(r, "kernels[0].headroom_bytes"), (int64_t)(64 * MIB) - 38112 * 1024);
    assert_true(json_object_is_type(jget(r, "kernels[0].error"), json_type_null));
    assert_string_equal(jstr(r, "kernels[0].suggestions[0].kind"), "raise_limit");
    assert_int_equal(jint(r, "kernels[0].suggestions[0].vmem_limit_bytes"), 38112 * 1024);
    json_object_put(r);

    /* margin counts against the limit, never inside vmem_bytes */
    r = plan(rows_kernel("v6e", 16384, 0, 17 * MIB), &fits);
    assert_false(fits);
    assert_int_equal(jint(r, "kernels[0].vmem_bytes"), 16 * MIB);
    assert_int_equal(jint(r, "kernels[0].margin_bytes"), 17 * MIB);
    assert_int_equal(jint(r, "kernels[0].overflow_bytes"), MIB);
    json_object_put(r);

    /* over physical VMEM on v7 (64 MiB, tpu_info) even with a 128 MiB limit: the
     * total-capacity form of jax #38988 */
    r = plan(rows_kernel("v7", 66611, 128 * MIB, 0), &fits);
    assert_false(fits);
    assert_string_equal(jstr(r, "kernels[0].error"),
                        "RESOURCE_EXHAUSTED: kernel \"fa\": Ran out of memory in memory space "
                        "vmem. Used 65.05M of 64.00M vmem. Exceeded vmem capacity by 1.05M.");
    assert_non_null(strstr(jstr(r, "kernels[0].warnings[0]"), "above the 64.00M of physical"));
    json_object_put(r);

    /* v4: no default is known; 16 MiB is assumed and said so */
    r = plan(rows_kernel("v4", 8, 0, 0), &fits);
    assert_true(fits);
    assert_string_equal(jstr(r, "kernels[0].limit_source"), "chip_default_assumed");
    assert_int_equal(jint(r, "kernels[0].vmem_limit_bytes"), 16 * MIB);
    json_object_put(r);
}

/* Random kernels straight through kernel_plan / kernel_suggest: every block suggestion
 * fits, is tile-aligned on the dims it changes and re-plans to its own figures, and no
 * axis can take the next larger tile and still fit. */
static void test_suggestions_fit_aligned_largest(void **state)
{
    const struct chip *chip = chip_find("v5e");
    static const enum dtype dts[] = {DT_F32, DT_BF16, DT_S8, DT_S4};
    struct kernel_operand ops[3];
    struct kernel_operand_plan rows[3];
    struct kernel_spec k;
    struct kernel_plan p;
    struct err e;
    uint64_t seed = 12345;
    unsigned over = 0, suggested = 0;
    (void)state;

    for (int iter = 0; iter < 300; iter++) {
        memset(&k, 0, sizeof(k));
        memset(ops, 0, sizeof(ops));
        k.name = "r";
        k.grid_rank = 3;
        k.nops = 3;
        k.ops = ops;
        for (int a = 0; a < 3; a++)
            k.grid[a] = 1 + (int64_t)(rng_splitmix64(&seed) % 8);
        int64_t t[3];
        for (int a = 0; a < 3; a++)
            t[a] = (int64_t)128 << (rng_splitmix64(&seed) % 5); /* 128 .. 2048 */
        static const int16_t maps[3][2] = {{0, 2}, {2, 1}, {0, 1}};
        for (int i = 0; i < 3; i++) {
            ops[i].name = i == 0 ? "x" : i == 1 ? "y" : "o";
            ops[i].role = i == 2 ? KERNEL_OUTPUT : KERNEL_INPUT;
            ops[i].dtype = dts[rng_splitmix64(&seed) % 4];
            ops[i].rank = 2;
            ops[i].has_index_map = true;
            for (int d = 0; d < 2; d++) {
                ops[i].index_map[d] = maps[i][d];
                ops[i].block[d] = t[maps[i][d]];
            }
        }
        assert_int_equal(kernel_plan(&k, 0, chip, rows, &p, &e), ERR_OK);
        kernel_suggest(&k, &p);
        if (p.fits)
            continue;
        over++;
        for (size_t s = 0; s < p.nsug; s++) {
            const struct kernel_suggestion *sg = &p.sug[s];
            struct kernel_operand changed[3];
            struct kernel_spec k2 = k;
            struct kernel_plan p2;
            struct kernel_operand_plan rows2[3];
            if (sg->kind != KSUG_BLOCKS)
                continue;
            suggested++;
            assert_true(sg->vmem_bytes <= p.vmem_limit);
            memcpy(changed, ops, sizeof(ops));
            for (int i = 0; i < 3; i++) {
                kernel_block_with_tiles(&ops[i], sg->tile, changed[i].block);
                assert_int_equal(changed[i].block[1] % 128, 0);
                assert_int_equal(changed[i].block[0] % kernel_sublanes(ops[i].dtype), 0);
            }
            k2.ops = changed;
            memcpy(k2.grid, sg->grid, sizeof(k2.grid));
            assert_int_equal(kernel_plan(&k2, 0, chip, rows2, &p2, &e), ERR_OK);
            assert_true(p2.fits);
            assert_int_equal(p2.vmem_bytes, sg->vmem_bytes);
            assert_int_equal(p2.hbm_bytes, sg->hbm_bytes);
            /* largest: doubling any tile (up to the original) no longer fits */
            for (int a = 0; a < 3; a++) {
                int64_t tile[KERNEL_MAX_GRID], grid[KERNEL_MAX_GRID];
                uint64_t vmem, hbm;
                memcpy(tile, sg->tile, sizeof(tile));
                memcpy(grid, sg->grid, sizeof(grid));
                if (tile[a] * 2 > t[a])
                    continue;
                tile[a] *= 2;
                assert_false(kernel_figures(&k, tile, grid, &vmem, &hbm));
                assert_true(vmem > p.vmem_limit);
            }
            /* fewest bytes moved first */
            if (s > 0 && p.sug[s - 1].kind == KSUG_BLOCKS)
                assert_true(p.sug[s - 1].hbm_bytes <= sg->hbm_bytes);
        }
    }
    assert_true(over > 20); /* the property was exercised */
    assert_true(suggested > 20);
}

/* Every bad input names its field. */
static void test_errors_name_the_field(void **state)
{
    static const struct {
        const char *kernel, *where, *msg;
    } cases[] = {
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[8,-1],\"dtype\":\"f32\"}]}",
         "kernels[0].inputs[0].block[1]", "integer from 1"},
        {"{\"name\":\"k\",\"grid\":[2],\"inputs\":[{\"name\":\"x\",\"block\":[8,128],"
         "\"dtype\":\"f32\",\"index_map\":[0,1]}]}",
         "kernels[0].inputs[0].index_map[1]", "from 0 to 0"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[8,128],\"dtype\":\"f32\","
         "\"index_map\":[null]}]}",
         "kernels[0].inputs[0].index_map", "one entry per block dim"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[8,128],\"dtype\":\"f64\"}]}",
         "kernels[0].inputs[0].dtype", "32-bit and narrower"},
        {"{\"name\":\"k\",\"outputs\":[{\"name\":\"o\",\"block\":[8,128],\"dtype\":\"f32\","
         "\"buffers\":3}]}",
         "kernels[0].outputs[0].buffers", "from 1 to 2"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[8,128],\"dtype\":\"f32\","
         "\"array\":[8]}]}",
         "kernels[0].inputs[0].array", "has 1 dims but the block has 2"},
        {"{\"name\":\"k\",\"scratch\":[{\"name\":\"s\",\"shape\":[8],\"dtype\":\"f32\","
         "\"memory_space\":\"hbm\"}]}",
         "kernels[0].scratch[0].memory_space", "vmem, smem or semaphore"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"blok\":[8]}]}", "kernels[0].inputs[0]",
         "unknown field \"blok\""},
        {"{\"grid\":[1]}", "kernels[0]", "\"name\" is required"},
        {"{\"name\":\"k\",\"grid\":[0]}", "kernels[0].grid[0]", "integer from 1"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[],\"dtype\":\"f32\"}]}",
         "kernels[0].inputs[0].block", "at least one dim"},
        {"{\"name\":\"k\",\"vmem_limit_bytes\":0}", "kernels[0].vmem_limit_bytes", "positive"},
        {"{\"name\":\"k\",\"flops\":\"many\"}", "kernels[0].flops", "number >= 0"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[8,128],\"dtype\":\"zz\"}]}",
         "kernels[0].inputs[0].dtype", "unknown dtype"},
        {"{\"name\":\"k\",\"inputs\":[{\"name\":\"x\",\"block\":[1099511627776,1099511627776,"
         "1099511627776],\"dtype\":\"f32\"}]}",
         "kernels[0]", "passes 2^64-1"},
    };
    struct plan_limits l;
    (void)state;

    plan_limits_default(&l);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[1024], *out = NULL;
        size_t len = 0;
        struct err e;
        snprintf(text, sizeof(text), "{\"tensors\":[],\"kernels\":[%s]}", cases[i].kernel);
        int rc = plan_run(text, strlen(text), NULL, &l, &out, &len, NULL, NULL, &e);
        if (rc == ERR_OK)
            fail_msg("case %zu planned: %s", i, cases[i].kernel);
        assert_null(out);
        if (strcmp(e.where, cases[i].where) != 0 || strstr(e.msg, cases[i].msg) == NULL)
            fail_msg("case %zu: where \"%s\" msg \"%s\"", i, e.where, e.msg);
    }
    {
        char *out = NULL;
        size_t len = 0;
        struct err e;
        const char *text = "{\"tensors\":[],\"kernels\":{}}";
        assert_int_not_equal(plan_run(text, strlen(text), NULL, &l, &out, &len, NULL, NULL, &e),
                             ERR_OK);
        assert_string_equal(e.where, "kernels");
    }
}

/* Pallas' block-shape rules (server/planner/SOURCES.md#block-shapes) become warnings naming
 * the operand; a kernel
 * over its limit whose blocks follow no grid axis gets no block suggestion, and says so. */
static void test_block_rule_warnings(void **state)
{
    const char *text =
        "{\"chip\":\"v5e\",\"tensors\":[],\"kernels\":[{\"name\":\"w\",\"grid\":[2],"
        "\"inputs\":["
        "{\"name\":\"a\",\"block\":[100,64],\"array\":[256,256],\"dtype\":\"f32\"},"
        "{\"name\":\"b\",\"block\":[100],\"array\":[1000],\"dtype\":\"f32\"},"
        "{\"name\":\"c\",\"block\":[16,128],\"array\":[8,128],\"dtype\":\"f32\"},"
        "{\"name\":\"d\",\"block\":[256],\"array\":[1000],\"dtype\":\"f32\"},"
        "{\"name\":\"e\",\"block\":[100,128],\"array\":[100,1024],\"dtype\":\"f32\"}]},"
        "{\"name\":\"big\",\"inputs\":[{\"name\":\"x\",\"block\":[8192,8192],"
        "\"dtype\":\"f32\",\"index_map\":[null,null]}]}]}";
    json_object *r = plan(text, NULL);
    json_object *w = jget(r, "kernels[0].warnings");
    (void)state;

    /* a breaks (8, 128); b breaks the rank-1 rule; c is bigger than its array; d (a power
     * of 2 >= 128) and e (second-minor equal to the array's) are fine */
    assert_int_equal(json_object_array_length(w), 3);
    assert_non_null(strstr(jstr(r, "kernels[0].warnings[0]"), "a: the last two block dims"));
    assert_non_null(strstr(jstr(r, "kernels[0].warnings[1]"), "b: a 1-D block must equal"));
    assert_non_null(strstr(jstr(r, "kernels[0].warnings[2]"), "c: the block is larger"));
    assert_false(jbool(r, "kernels[1].fits"));
    assert_int_equal(jint(r, "kernels[1].vmem_bytes"), 2 * 8192 * 8192 * 4);
    assert_non_null(strstr(jstr(r, "kernels[1].warnings[0]"), "no tile-aligned block"));
    /* 512 MiB is above physical VMEM (128 MiB): no raised limit either */
    assert_int_equal(json_object_array_length(jget(r, "kernels[1].suggestions")), 0);
    json_object_put(r);
}

/* An empty kernels array, and none at all: the plan fits and its kernels section is empty. */
static void test_model_without_kernels_has_an_empty_section(void **state)
{
    bool fits;
    json_object *r = plan("{\"tensors\":[{\"name\":\"w\",\"shape\":[8,128],\"dtype\":\"f32\"}],"
                          "\"kernels\":[]}",
                          &fits);
    (void)state;

    assert_true(fits);
    assert_int_equal(json_object_array_length(jget(r, "kernels")), 0);
    assert_int_equal(jint(r, "summary.kernels"), 0);
    json_object_put(r);
    r = plan("{\"tensors\":[{\"name\":\"w\",\"shape\":[8,128],\"dtype\":\"f32\"}]}", &fits);
    assert_true(fits);
    assert_int_equal(json_object_array_length(jget(r, "kernels")), 0);
    json_object_put(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_vmem_and_traffic),
        cmocka_unit_test(test_odd_shapes_by_width),
        cmocka_unit_test(test_buffers_1d_scalars_and_spaces),
        cmocka_unit_test(test_e1001_text_and_limits),
        cmocka_unit_test(test_suggestions_fit_aligned_largest),
        cmocka_unit_test(test_errors_name_the_field),
        cmocka_unit_test(test_block_rule_warnings),
        cmocka_unit_test(test_model_without_kernels_has_an_empty_section),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
