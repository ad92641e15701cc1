/* test_probe.c - the probe parsers on captured outputs (cpuinfo, meminfo, os-release,
 * nvidia-smi CSV, macOS sysctl and system_profiler), power, the volume and read sample,
 * redaction (allowlist, canary scan, path placeholders). */
#include <criterion/criterion.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"
#include "probe/redact.h"
#include "schema/hardware.h"

static buf fixture(const char *name) {
    char path[256];
    buf b;
    snprintf(path, sizeof path, "tests/data/probe/%s", name);
    buf_init(&b, 1 << 20);
    cr_assert_eq(file_read_all(path, &b), PACER_OK, "%s", path);
    return b;
}

static bool has_feature(const probe_cpu *c, const char *f) {
    for (size_t i = 0; i < c->n_features; i++)
        if (strcmp(c->features[i], f) == 0) return true;
    return false;
}

Test(linux, cpuinfo_model_threads_and_inference_features) {
    buf b = fixture("cpuinfo-h200.txt");
    probe_cpu cpu;
    probe_cpuinfo_parse(b.data, b.len, &cpu);
    cr_assert_str_eq(cpu.model, "Intel(R) Xeon(R) Processor");
    cr_assert_eq(cpu.threads, 2, "the captured head lists processors 0 and 1");
    cr_assert_eq(cpu.cores, 1, "processor 1's core id is cut off in the capture");
    cr_assert(cpu.features_known);
    static const char *const want[] = {"avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "amx_tile", "amx_int8", "amx_bf16"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) cr_assert(has_feature(&cpu, want[i]), "%s", want[i]);
    cr_assert(!has_feature(&cpu, "neon"));
    buf_free(&b);
}

Test(linux, cpuinfo_counts_cores_from_core_ids) {
    const char *text = "processor\t: 0\nmodel name\t: AMD Ryzen 7 7840U w/ Radeon  780M Graphics\nphysical id\t: 0\n"
                       "core id\t\t: 0\nflags\t\t: fpu avx2 fma\n\nprocessor\t: 1\nphysical id\t: 0\ncore id\t\t: 0\n\n"
                       "processor\t: 2\nphysical id\t: 0\ncore id\t\t: 1\n\nprocessor\t: 3\nphysical id\t: 0\ncore id\t\t: 1\n";
    probe_cpu cpu;
    probe_cpuinfo_parse(text, strlen(text), &cpu);
    cr_assert_eq(cpu.threads, 4);
    cr_assert_eq(cpu.cores, 2);
    cr_assert_str_eq(cpu.model, "AMD Ryzen 7 7840U with Radeon 780M Graphics");
    cr_assert_eq(cpu.n_features, 2);
    cr_assert(!has_feature(&cpu, "avx512f"), "avx512f is not avx512fp16 or a prefix match");
}

Test(linux, meminfo_and_os_release) {
    buf b = fixture("meminfo-h200.txt");
    cr_assert_eq(probe_meminfo_parse(b.data, b.len), 131961788ull * 1024);
    buf_free(&b);
    b = fixture("os-release-h200.txt");
    probe_os os = {0};
    probe_os_release_parse(b.data, b.len, &os);
    cr_assert_str_eq(os.name, "Ubuntu");
    cr_assert_str_eq(os.version, "24.04");
    buf_free(&b);
    cr_assert_eq(probe_meminfo_parse("MemFree: 1 kB\n", 14), 0);
}

/* names.c: one normaliser and one allow-list for every probe source */
Test(names, normalise_trims_squeezes_and_spells_with) {
    static const struct { const char *in, *want; } cases[] = {
        {"  Intel(R)   Xeon(R)\tCPU  ", "Intel(R) Xeon(R) CPU"},
        {"AMD Ryzen 7 w/ Radeon", "AMD Ryzen 7 with Radeon"},
        {"AMD Ryzen 7 w/", "AMD Ryzen 7 with"},
        {"w/ first", "w/ first"},        /* only after a word */
        {"I/O w/o x", "I/O w/o x"},       /* "w/o" is not "w/" */
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char s[128];
        snprintf(s, sizeof s, "%s", cases[i].in);
        probe_name_normalise(s, sizeof s);
        cr_expect_str_eq(s, cases[i].want, "'%s'", cases[i].in);
    }
    char small[8];
    memcpy(small, "a  b c", 7);
    probe_name_normalise(small, 5);
    cr_expect_str_eq(small, "a b ", "truncated to the capacity");
}

Test(names, allowed_device_names) {
    cr_expect(probe_name_allowed("NVIDIA H200"));
    cr_expect(probe_name_allowed("AMD Instinct MI300X (gfx942)"));
    cr_expect(probe_name_allowed("Apple M2 Max, 38-core GPU"));
    cr_expect_not(probe_name_allowed(""));
    cr_expect_not(probe_name_allowed("12345"), "no letter");
    cr_expect_not(probe_name_allowed("GPU 0123456789ab"), "12 hex digits: a serial or MAC");
    cr_expect_not(probe_name_allowed("GPU #1"), "a character outside the list");
    cr_expect_not(probe_name_allowed("host\tname"));
    char longer[90];
    memset(longer, 'x', 81);
    longer[81] = '\0';
    cr_expect_not(probe_name_allowed(longer), "over 80 bytes");
    longer[80] = '\0';
    cr_expect(probe_name_allowed(longer));
}

/* a tool's output line by line: empty lines kept, a long one cut, the last without '\n' */
Test(names, line_copy) {
    static const char text[] = "first\n\na rather long line\nlast";
    char line[8];
    size_t at = 0;
    static const char *const want[] = {"first", "", "a rathe", "last"};
    for (size_t k = 0; k < 4; k++) {
        cr_assert(probe_line_copy(text, sizeof text - 1, &at, line, sizeof line), "line %zu", k);
        cr_expect_str_eq(line, want[k]);
    }
    cr_expect_not(probe_line_copy(text, sizeof text - 1, &at, line, sizeof line));
}

Test(nvidia, parses_query_csv_with_header_and_units) {
    buf b = fixture("nvidia-h200-query.csv");
    probe_gpu_list all, kept;
    cr_assert_eq(probe_nvidia_parse(b.data, b.len, &all), PACER_OK);
    cr_assert_eq(all.count, 1);
    probe_gpu *g = &all.gpu[0];
    cr_assert_str_eq(g->name, "NVIDIA H200");
    cr_assert_eq(g->memory_bytes, 143771ull << 20);
    cr_assert_str_eq(g->driver, "580.159.04");
    cr_assert_str_eq(g->compute_cap, "9.0");
    cr_assert_float_eq(g->power_limit_w, 700.0, 1e-9);
    cr_assert_eq(g->max_sm_mhz, 1980);
    cr_assert_eq(g->max_mem_mhz, 3201);
    probe_nvidia_select(&all, "GPU-5f0c1e2a", &kept);
    cr_assert_eq(kept.count, 1);
    probe_nvidia_select(&all, "1", &kept);
    cr_assert_eq(kept.count, 0);
    buf_free(&b);
}

Test(nvidia, multi_gpu_visibility_and_missing_values) {
    /* hand-written (README.md says why): four GPUs with UUIDs and a [N/A] power limit */
    buf b = fixture("nvidia-a100x4-query.csv");
    probe_gpu_list all, kept;
    cr_assert_eq(probe_nvidia_parse(b.data, b.len, &all), PACER_OK);
    cr_assert_eq(all.count, 4);
    cr_assert_float_eq(all.gpu[2].power_limit_w, 0.0, 1e-9, "[N/A] is unknown");
    probe_nvidia_select(&all, "3,1,1", &kept);
    cr_assert_eq(kept.count, 2);
    cr_assert_str_eq(kept.gpu[0].uuid, all.gpu[3].uuid);
    probe_nvidia_select(&all, "GPU-2b2c3d4e,0", &kept);
    cr_assert_eq(kept.count, 2);
    cr_assert_str_eq(kept.gpu[0].uuid, all.gpu[1].uuid);
    probe_nvidia_select(&all, "", &kept);
    cr_assert_eq(kept.count, 0);
    probe_nvidia_select(&all, NULL, &kept);
    cr_assert_eq(kept.count, 4);
    buf_free(&b);
}

Test(nvidia, header_in_another_order_two_gpus) {
    /* a real capture (triton-inference-server/server pull request 8070): the header
     * starts with compute_cap, not index, and there is no uuid column */
    buf b = fixture("nvidia-titanv-rtx5880-query.csv");
    probe_gpu_list all, kept;
    cr_assert_eq(probe_nvidia_parse(b.data, b.len, &all), PACER_OK);
    cr_assert_eq(all.count, 2, "the header is no GPU");
    cr_assert_str_eq(all.gpu[0].name, "NVIDIA TITAN V");
    cr_assert_str_eq(all.gpu[0].compute_cap, "7.0");
    cr_assert_str_eq(all.gpu[0].driver, "570.86.15");
    cr_assert_str_eq(all.gpu[1].name, "NVIDIA RTX 5880 Ada Generation");
    cr_assert_str_eq(all.gpu[1].compute_cap, "8.9");
    cr_assert_eq(all.gpu[1].memory_bytes, 0, "not queried: unknown");
    probe_nvidia_select(&all, "1,0", &kept);
    cr_assert_eq(kept.count, 2);
    cr_assert_str_eq(kept.gpu[0].name, "NVIDIA RTX 5880 Ada Generation");
    probe_nvidia_select(&all, "GPU-b516", &kept);
    cr_assert_eq(kept.count, 0);
    cr_assert_eq(kept.source, PROBE_SOURCE_PARTIAL, "no uuid to match the entry against");
    buf_free(&b);
}

Test(nvidia, noheader_nounits_in_query_order) {
    const char *text = "0, NVIDIA GeForce RTX 4090, GPU-aaaa, 24564, 550.54.14, 8.9, 450.00, 3120, 10501\n";
    probe_gpu_list all;
    cr_assert_eq(probe_nvidia_parse(text, strlen(text), &all), PACER_OK);
    cr_assert_eq(all.count, 1);
    cr_assert_str_eq(all.gpu[0].name, "NVIDIA GeForce RTX 4090");
    cr_assert_eq(all.gpu[0].memory_bytes, 24564ull << 20);
    cr_assert_eq(all.gpu[0].max_mem_mhz, 10501);
}

Test(macos, sysctl_and_system_profiler) {
    buf b = fixture("sysctl-m2max.txt");
    probe_cpu cpu = {0};
    probe_os os = {0};
    uint64_t mem = 0;
    probe_sysctl_parse(b.data, b.len, &cpu, &mem, &os);
    cr_assert_str_eq(cpu.model, "Apple M2 Max");
    cr_assert_eq(cpu.cores, 12);
    cr_assert_eq(mem, 34359738368ull);
    cr_assert_str_eq(os.version, "14.1.1");
    cr_assert_str_eq(os.kernel, "23.1.0");
    cr_assert(has_feature(&cpu, "dotprod"));
    cr_assert(!has_feature(&cpu, "i8mm"));
    buf_free(&b);

    b = fixture("system-profiler-m2max.json");
    probe_cpu cpu2 = {0};
    probe_os os2 = {0};
    probe_gpu_list gpus = {0};
    uint64_t mem2 = 0;
    cr_assert_eq(probe_system_profiler_parse(b.data, b.len, &cpu2, &mem2, &os2, &gpus), PACER_OK);
    cr_assert_str_eq(cpu2.model, "Apple M2 Max");
    cr_assert_eq(cpu2.cores, 12);
    cr_assert_eq(mem2, 32ull << 30);
    cr_assert_str_eq(os2.name, "macOS");
    cr_assert_str_eq(os2.version, "14.1.1");
    cr_assert_eq(gpus.count, 1);
    cr_assert_eq(gpus.gpu[0].compute_units, 38);
    cr_assert(gpus.gpu[0].unified);
    cr_assert_str_eq(gpus.gpu[0].vendor, "apple");
    /* nothing of the serial, UUID, host or user made it into the values */
    char all[2048];
    snprintf(all, sizeof all, "%s|%s|%s|%s|%s", cpu2.model, os2.name, os2.version, os2.kernel, gpus.gpu[0].name);
    cr_assert_null(strstr(all, "CANARY"));
    cr_assert_null(strstr(all, "canary"));
    buf_free(&b);
}

Test(power, decides_from_supply_entries) {
    cr_assert_eq(probe_power_decide(0, NULL, NULL, NULL), PROBE_POWER_AC_ONLY, "no battery: ac-only");
    const char *t1[] = {"Mains\n", "Battery\n"}, *s1[] = {NULL, "Charging\n"}, *o1[] = {"1\n", NULL};
    cr_assert_eq(probe_power_decide(2, t1, s1, o1), PROBE_POWER_AC);
    const char *s2[] = {NULL, "Discharging\n"}, *o2[] = {"0\n", NULL};
    cr_assert_eq(probe_power_decide(2, t1, s2, o2), PROBE_POWER_BATTERY);
    const char *t3[] = {"Mains\n"}, *o3[] = {"1\n"}, *s3[] = {NULL};
    cr_assert_eq(probe_power_decide(1, t3, s3, o3), PROBE_POWER_AC_ONLY, "mains without a battery");
    cr_assert_str_eq(probe_power_name(PROBE_POWER_AC_ONLY), "ac-only");
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(power, check_reports_a_change) {
    char root[] = "/tmp/pacer-power-XXXXXX", p[512];
    cr_assert_not_null(mkdtemp(root));
    snprintf(p, sizeof p, "%s/sys/class/power_supply/BAT0", root);
    cr_assert_eq(dir_create_all(p, 0755), PACER_OK);
    snprintf(p, sizeof p, "%s/sys/class/power_supply/BAT0/type", root);
    write_text(p, "Battery\n");
    snprintf(p, sizeof p, "%s/sys/class/power_supply/BAT0/status", root);
    write_text(p, "Charging\n");
    probe_power first = probe_power_read(root), now;
    cr_assert_eq(first, PROBE_POWER_AC);
    cr_assert_eq(power_check(root, first, &now), PACER_OK);
    write_text(p, "Discharging\n");
    cr_assert_eq(power_check(root, first, &now), PACER_ERR_STATE);
    cr_assert_eq(now, PROBE_POWER_BATTERY);
    power_watch w;
    power_watch_start(&w, root);
    cr_assert_eq(w.expected, PROBE_POWER_BATTERY);
    cr_assert_eq(power_watch_poll(&w, true), PACER_OK);
    write_text(p, "Charging\n");
    cr_assert_eq(power_watch_poll(&w, false), PACER_OK, "not due for 30 s");
    cr_assert_eq(power_watch_poll(&w, true), PACER_ERR_STATE);
    write_text(p, "Discharging\n");
    cr_assert_eq(power_watch_poll(&w, true), PACER_ERR_STATE, "a change stays reported");
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

Test(disk, volume_and_read_sample) {
    char path[] = "/tmp/pacer-sample-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    static char block[1 << 20];
    memset(block, 'x', sizeof block);
    for (int i = 0; i < 8; i++) cr_assert_eq(write(fd, block, sizeof block), (ssize_t)sizeof block);
    close(fd);
    uint64_t cap = 0, avail = 0;
    cr_assert_eq(probe_volume_read(path, &cap, &avail), PACER_OK);
    cr_assert(cap > 0 && avail <= cap);
    probe_read_sample rs;
    cr_assert_eq(probe_read_sample_take(path, 0, &rs), PACER_OK);
    cr_assert_eq(rs.bytes, 8u << 20);
    cr_assert(rs.seconds > 0);
    cr_assert_eq(probe_read_sample_take(path, 3u << 20, &rs), PACER_OK);
    cr_assert_eq(rs.bytes, 3u << 20, "capped");
    unlink(path);
    cr_assert_eq(probe_read_sample_take(path, 0, &rs), PACER_ERR_NOT_FOUND);
}

/* Pages of `path` resident in the page cache (mincore), of `pages`. */
static size_t resident_pages(const char *path, size_t len, size_t *pages) {
    int fd = open(path, O_RDONLY);
    cr_assert(fd >= 0);
    void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    cr_assert(m != MAP_FAILED);
    long pg = sysconf(_SC_PAGESIZE);
    *pages = (len + (size_t)pg - 1) / (size_t)pg;
    unsigned char *vec = malloc(*pages);
    cr_assert_eq(mincore(m, len, vec), 0);
    size_t n = 0;
    for (size_t i = 0; i < *pages; i++) n += vec[i] & 1;
    free(vec);
    munmap(m, len);
    close(fd);
    return n;
}

Test(disk, read_sample_never_comes_from_the_page_cache) {
    /* a file that is wholly in the page cache (just written, then read back) */
    char path[] = "/tmp/pacer-sample-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    static char block[1 << 20];
    memset(block, 'y', sizeof block);
    for (int i = 0; i < 8; i++) cr_assert_eq(write(fd, block, sizeof block), (ssize_t)sizeof block);
    cr_assert_eq(lseek(fd, 0, SEEK_SET), 0);
    while (read(fd, block, sizeof block) > 0) {}
    close(fd);
    size_t pages = 0;
    size_t before = resident_pages(path, 8u << 20, &pages);
    probe_read_sample rs;
    cr_assert_eq(probe_read_sample_take(path, 0, &rs), PACER_OK);
    cr_assert_eq(rs.bytes, 8u << 20);
    if (strcmp(rs.method, "fadvise") == 0) {
        /* no O_DIRECT here: the cached pages were dropped, the sample read the device */
        cr_assert_eq(resident_pages(path, 8u << 20, &pages), 0, "%zu of %zu pages were cached", before, pages);
    } else {
        cr_assert_str_eq(rs.method, "o_direct", "O_DIRECT reads bypass the page cache");
    }
    unlink(path);

    /* tmpfs: the pages are the storage and cannot be dropped, so there is no sample at all */
    char shm[] = "/dev/shm/pacer-sample-XXXXXX";
    fd = mkstemp(shm);
    if (fd < 0) return; /* no /dev/shm on this machine */
    for (int i = 0; i < 2; i++) cr_assert_eq(write(fd, block, sizeof block), (ssize_t)sizeof block);
    close(fd);
    struct statfs sf;
    cr_assert_eq(statfs(shm, &sf), 0);
    if (sf.f_type == TMPFS_MAGIC) cr_assert_eq(probe_read_sample_take(shm, 0, &rs), PACER_ERR_STATE);
    unlink(shm);
}

Test(redact, canary_scan_finds_identifying_text) {
    redact_context ctx = {.host = "canary-host", .user = "canaryuser", .home = "/home/canaryuser"};
    const char *what = NULL;
    static const struct {
        const char *text;
        const char *what;
    } cases[] = {
        {"id GPU-5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13 x", "uuid"},
        {"0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", "uuid"},
        {"mac 52:54:00:12:34:56", "mac address"},
        {"mac 52-54-00-AB-cd-EF.", "mac address"},
        {"on canary-host today", "host name"},
        {"by CanaryUser", "user name"},
        {"/home/canaryuser/models/x.gguf", "home path"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert(redact_text_identifying(cases[i].text, strlen(cases[i].text), &ctx, &what), "%s", cases[i].text);
        cr_assert_str_eq(what, cases[i].what);
    }
    static const char *const clean[] = {"NVIDIA H200", "canary-hosts", "6.18.44-fc-v1045", "12:34:56", "avx512_vnni"};
    for (size_t i = 0; i < sizeof clean / sizeof clean[0]; i++)
        cr_assert(!redact_text_identifying(clean[i], strlen(clean[i]), &ctx, NULL), "%s", clean[i]);
}

Test(redact, allowlist_drops_and_nulls) {
    redact_context ctx = {.host = "canary-host", .user = "canaryuser", .home = "/home/canaryuser"};
    json_t *hw = json_pack("{s:{s:s, s:i, s:s, s:[s, s]}, s:s, s:[{s:s, s:s, s:s}], s:{s:s, s:s}}",
                           "cpu", "model", "Intel(R) Xeon(R) Processor", "cores", 16, "serial", "1320521000042",
                           "features", "avx2", "GPU-5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13",
                           "hostname", "canary-host",
                           "gpus", "name", "canary-host GPU", "uuid", "GPU-5f0c1e2a-9b7d-4c3e-8a61-2d4b6e8f0a13",
                           "vendor", "nvidia",
                           "os", "name", "Debian GNU/Linux", "kernel", "6.1.0 #1 SMP");
    size_t changed = redact_hardware(hw, &ctx);
    char *text = json_dumps(hw, JSON_SORT_KEYS);
    cr_assert_eq(changed, 6, "%zu: %s", changed, text);
    cr_assert_null(strstr(text, "1320521000042"), "%s", text);
    cr_assert_null(strstr(text, "5f0c1e2a"), "%s", text);
    cr_assert_null(strstr(text, "canary"), "%s", text);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(hw, "cpu"), "model")), "Intel(R) Xeon(R) Processor");
    cr_assert_eq(json_array_size(json_object_get(json_object_get(hw, "cpu"), "features")), 1);
    cr_assert(json_is_null(json_object_get(json_object_get(hw, "os"), "kernel")), "'#' is not in a version");
    free(text);
    json_decref(hw);
}

Test(redact, path_placeholders) {
    redact_paths p = {.binary = "/opt/llama/bin/llama-server", .model = "/data/models/m.gguf",
                      .root = "/data/models", .suite = "/srv/suites/chat.json"};
    char *s = redact_paths_apply(&p, "/opt/llama/bin/llama-server -m /data/models/m.gguf --x=/data/models/other "
                                     "/data/models/m.gguf2 /x/data/models \"/srv/suites/chat.json\"");
    cr_assert_str_eq(s, "<binary> -m <model> --x=<root>/other <root>/m.gguf2 /x/data/models \"<suite>\"");
    free(s);
    redact_paths none = {0};
    s = redact_paths_apply(&none, "plain");
    cr_assert_str_eq(s, "plain");
    free(s);
}

Test(collect, nvidia_fixture_never_leaks_the_canary_uuid) {
    char tool[] = "/tmp/pacer-nvsmi-XXXXXX", cwd[1024];
    int fd = mkstemp(tool);
    cr_assert(fd >= 0);
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    dprintf(fd, "#!/bin/sh\nexec cat '%s/tests/data/probe/nvidia-h200-query.csv'\n", cwd);
    close(fd);
    chmod(tool, 0755);
    unsetenv("CUDA_VISIBLE_DEVICES");
    probe_options opt = {.nvidia_smi = tool, .rocminfo = "/nonexistent/rocminfo"};
    json_t *hw = NULL;
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    unlink(tool);
    char *text = json_dumps(hw, JSON_SORT_KEYS);
    cr_assert_null(strstr(text, "5f0c1e2a"), "%s", text);
    cr_assert_null(strstr(text, "1320521000042"));
    json_t *g = json_array_get(json_object_get(hw, "gpus"), 0);
    cr_assert_str_eq(json_string_value(json_object_get(g, "name")), "NVIDIA H200");
    cr_assert_str_eq(json_string_value(json_object_get(g, "compute_capability")), "9.0");
    cr_assert_str_eq(json_string_value(json_object_get(hw, "gpus_source")), "probed");
    const char *sections[] = {"cpu", "os", "power", "volume"};
    cr_assert_eq(json_integer_value(json_object_get(hw, "gpu_count")), 1);
    cr_assert_str_eq(json_string_value(json_object_get(hw, "source")), "probed");
    char why[160];
    cr_assert(hardware_validate(hw, why, sizeof why), "%s", why);
    for (size_t i = 0; i < 4; i++)
        cr_assert_not_null(json_object_get(json_object_get(hw, sections[i]), "source"), "%s", sections[i]);
    free(text);
    json_decref(hw);
}

Test(collect, reads_a_fake_root_tree) {
    char root[] = "/tmp/pacer-root-XXXXXX", p[512], cmd[1200];
    cr_assert_not_null(mkdtemp(root));
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/proc/sys/kernel %s/etc %s/sys/class/power_supply && "
             "cp tests/data/probe/cpuinfo-h200.txt %s/proc/cpuinfo && "
             "cp tests/data/probe/meminfo-h200.txt %s/proc/meminfo && "
             "cp tests/data/probe/os-release-h200.txt %s/etc/os-release && "
             "echo 6.18.44-fc-v973-gpu > %s/proc/sys/kernel/osrelease",
             root, root, root, root, root, root, root);
    cr_assert_eq(system(cmd), 0);
    probe_options opt = {.sys_root = root, .no_gpus = true};
    json_t *hw = NULL;
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    json_t *cpu = json_object_get(hw, "cpu"), *os = json_object_get(hw, "os");
    cr_assert_str_eq(json_string_value(json_object_get(cpu, "model")), "Intel(R) Xeon(R) Processor");
    cr_assert_str_eq(json_string_value(json_object_get(cpu, "source")), "probed");
    cr_assert_eq(json_integer_value(json_object_get(hw, "memory_bytes")), 131961788ll * 1024);
    cr_assert_str_eq(json_string_value(json_object_get(os, "name")), "Ubuntu");
    cr_assert_str_eq(json_string_value(json_object_get(os, "kernel")), "6.18.44-fc-v973-gpu");
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(hw, "power"), "state")), "ac-only");
    cr_assert_str_eq(json_string_value(json_object_get(hw, "gpus_source")), "unknown");
    json_decref(hw);
    snprintf(p, sizeof p, "%s/proc/cpuinfo", root);
    unlink(p);
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(hw, "cpu"), "source")), "unknown");
    json_decref(hw);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

/* One hardware shape: the validator takes the probe's object, an attested copy, the unknown
 * object, and the earlier managed-receipt shape (memory.total_bytes, gpus[].compute_units),
 * which receipts saved before still hold; it refuses members outside the table. */
Test(hardware, one_shape_and_the_legacy_one) {
    static const char *const good[] = {
        "{\"source\":\"unknown\",\"cpu\":null,\"memory_bytes\":null,\"gpus\":[],\"gpu_count\":null}",
        "{\"source\":\"attested\",\"cpu\":{\"model\":\"Test CPU 8-Core\",\"cores\":8},\"memory_bytes\":68719476736,"
        "\"gpus\":[{\"name\":\"Test GPU 24GB\",\"memory_bytes\":25769803776,\"cores\":128}],\"gpu_count\":1}",
        "{\"source\":\"partial\",\"cpu\":null,\"memory_bytes\":null,\"gpus\":[],\"gpu_count\":2}",
        /* the earlier managed shape */
        "{\"source\":\"probed\",\"cpu\":{\"model\":\"X\",\"cores\":2,\"threads\":4,\"features\":[\"avx2\"],\"source\":\"probed\"},"
        "\"memory\":{\"total_bytes\":1024,\"source\":\"probed\"},\"gpus\":[{\"vendor\":\"nvidia\",\"name\":\"G\","
        "\"compute_units\":132,\"memory_bytes\":null}],\"gpus_source\":\"probed\","
        "\"volume\":{\"capacity_bytes\":1,\"free_bytes\":1,\"source\":\"probed\"}}",
    };
    char why[160];
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        json_t *hw = json_loads(good[i], 0, NULL);
        cr_assert_not_null(hw, "%zu", i);
        cr_expect(hardware_validate(hw, why, sizeof why), "%zu: %s", i, why);
        json_decref(hw);
    }
    static const struct { const char *doc, *want; } bad[] = {
        {"{\"cpu\":null}", "hardware.source is missing or unknown"},
        {"{\"source\":\"guessed\"}", "hardware.source is missing or unknown"},
        {"{\"source\":\"probed\",\"serial\":\"S1\"}", "hardware.serial is not a hardware field"},
        {"{\"source\":\"probed\",\"gpus\":[{\"name\":\"G\",\"uuid\":\"GPU-1\"}]}", "hardware.gpus[].uuid is not a hardware field"},
        {"{\"source\":\"probed\",\"memory_bytes\":\"1 GB\"}", "hardware.memory_bytes is malformed"},
        {"{\"source\":\"probed\",\"cpu\":{\"cores\":-2}}", "hardware.cpu.cores is malformed"},
        {"{\"source\":\"probed\",\"gpus\":[{\"name\":\"A\"}],\"gpu_count\":2}", "hardware.gpus and hardware.gpu_count disagree"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *hw = json_loads(bad[i].doc, 0, NULL);
        cr_assert_not_null(hw, "%zu", i);
        cr_expect_not(hardware_validate(hw, why, sizeof why), "%s", bad[i].doc);
        cr_expect_str_eq(why, bad[i].want);
        json_decref(hw);
    }
    json_t *u = hardware_unknown();
    cr_expect(hardware_validate(u, why, sizeof why), "%s", why);
    json_decref(u);
}

/* The builder copies only attested facts, checks them, and says "partial" when one is missing. */
Test(hardware, attested_copy) {
    json_t *in = json_loads("{\"source\":\"probed\",\"cpu\":{\"model\":\"C\",\"cores\":4,\"threads\":8},\"memory_bytes\":64,"
                            "\"os\":{\"name\":\"Debian\"},\"gpus\":[{\"name\":\"G\",\"memory_bytes\":8,\"cores\":2,\"vendor\":\"amd\"}]}",
                            0, NULL);
    char why[160];
    json_t *out = hardware_copy_attested(in, "attested", why, sizeof why);
    cr_assert_not_null(out, "%s", why);
    char *t = json_dumps(out, JSON_SORT_KEYS | JSON_COMPACT);
    cr_expect_str_eq(t, "{\"cpu\":{\"cores\":4,\"model\":\"C\"},\"gpu_count\":1,\"gpus\":[{\"cores\":2,\"memory_bytes\":8,"
                        "\"name\":\"G\"}],\"memory_bytes\":64,\"source\":\"attested\"}");
    free(t);
    cr_expect(hardware_validate(out, why, sizeof why), "%s", why);
    json_decref(out);
    json_object_del(json_object_get(in, "cpu"), "cores");
    out = hardware_copy_attested(in, "attested", why, sizeof why);
    cr_expect_str_eq(json_string_value(json_object_get(out, "source")), "partial");
    json_decref(out);
    json_object_set_new(in, "gpu_count", json_integer(3));
    cr_expect_null(hardware_copy_attested(in, "attested", why, sizeof why));
    cr_expect_str_eq(why, ".gpus and .gpu_count disagree");
    json_decref(in);
}
