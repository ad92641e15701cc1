/* test_probe_rocm.c - rocminfo parsing and HIP's GPU visibility rules, one test per rule,
 * on rocminfo outputs captured on real machines (tests/data/probe/README.md names them):
 * eight MI300X behind two CPU agents, three MI25 on the in-kernel driver, and two APUs. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fileio.h"
#include "probe/probe.h"
#include "probe/probe_internal.h"

static probe_gpu_list agents, out;

static void load_agents(const char *name) {
    char path[256];
    buf b;
    snprintf(path, sizeof path, "tests/data/probe/%s", name);
    buf_init(&b, 1 << 20);
    cr_assert_eq(file_read_all(path, &b), PACER_OK, "%s", path);
    cr_assert_eq(probe_rocminfo_parse(b.data, b.len, &agents), PACER_OK);
    buf_free(&b);
}

static void select_gpus(const char *name, const char *hip, const char *cuda) {
    load_agents(name);
    probe_rocm_select(&agents, hip, cuda, &out);
}

Test(rocm, parses_agents_and_first_global_pool) {
    load_agents("rocminfo-mi25x3.txt");
    cr_assert_eq(agents.count, 4);
    cr_assert(!agents.gpu[0].is_gpu);
    cr_assert(agents.gpu[1].is_gpu);
    cr_assert_str_eq(agents.gpu[1].name, "Radeon Instinct MI25");
    cr_assert_str_eq(agents.gpu[1].vendor, "amd");
    cr_assert_eq(agents.gpu[1].compute_units, 64);
    cr_assert_eq(agents.gpu[1].memory_bytes, 16760832ull * 1024);
    select_gpus("rocminfo-mi300x8.txt", NULL, NULL);
    cr_assert_eq(agents.count, 10);
    cr_assert_eq(out.count, 8);
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
    cr_assert_str_eq(out.gpu[7].name, "AMD Instinct MI300X");
    cr_assert_eq(out.gpu[7].compute_units, 304);
    cr_assert_eq(out.gpu[0].memory_bytes, 201310208ull * 1024, "first global pool only");
    cr_assert_eq(agents.gpu[1].memory_bytes, 1056871544ull * 1024, "a CPU agent's own pool");
}


Test(rocm, hip_visible_devices_wins_over_cuda) {
    select_gpus("rocminfo-mi300x8.txt", "3", "0");
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[5].uuid);
}

Test(rocm, cuda_visible_devices_used_when_hip_unset) {
    select_gpus("rocminfo-mi300x8.txt", NULL, "1,2");
    cr_assert_eq(out.count, 2);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[3].uuid);
    cr_assert_str_eq(out.gpu[1].uuid, agents.gpu[4].uuid);
}

Test(rocm, hip_only_a_pair_of_quotes_falls_back_to_cuda) {
    select_gpus("rocminfo-mi300x8.txt", "\"\"", "2");
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[4].uuid);
}

Test(rocm, index_must_be_plain) {
    static const char *const bad[] = {"01", "+1", " 1", "1 ", "-1", "1.0", "0x1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        select_gpus("rocminfo-mi300x8.txt", bad[i], NULL);
        cr_assert_eq(out.count, 0, "'%s' is not an index", bad[i]);
    }
    select_gpus("rocminfo-mi300x8.txt", "1", NULL);
    cr_assert_eq(out.count, 1);
    select_gpus("rocminfo-mi300x8.txt", "0", NULL);
    cr_assert_eq(out.count, 1);
}

Test(rocm, index_counts_gpu_agents_not_cpu_agents) {
    /* two CPU agents (one per socket) come before the first GPU */
    select_gpus("rocminfo-mi300x8.txt", "0", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].name, "AMD Instinct MI300X");
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[2].uuid);
    /* an NPU agent (Device Type DSP) after the APU's GPU is no GPU either */
    select_gpus("rocminfo-apu-780m.txt", "0,1", NULL);
    cr_assert_eq(agents.count, 3);
    cr_assert(!agents.gpu[2].is_gpu);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].name, "AMD Radeon 780M Graphics");
}

Test(rocm, gpu_uuid_prefix_found_in_agent_uuid) {
    select_gpus("rocminfo-mi300x8.txt", "GPU-2ccc", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].uuid, "GPU-2cccccccccccccc2");
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
    select_gpus("rocminfo-mi300x8.txt", "GPU-7bbbbbbbbbbbbbb7,0", NULL);
    cr_assert_eq(out.count, 2);
    cr_assert_str_eq(out.gpu[0].uuid, "GPU-7bbbbbbbbbbbbbb7");
    cr_assert_str_eq(out.gpu[1].uuid, "GPU-0aaaaaaaaaaaaaa0");
}

Test(rocm, first_invalid_entry_ends_the_list) {
    select_gpus("rocminfo-mi300x8.txt", "0,x,1", NULL);
    cr_assert_eq(out.count, 1);
    select_gpus("rocminfo-mi300x8.txt", "2,,3", NULL);
    cr_assert_eq(out.count, 1, "an empty entry is invalid too");
    /* a GPU- entry that matches no printed Uuid is invalid: ends the list, not partial */
    select_gpus("rocminfo-mi300x8.txt", "1,GPU-ffff,2", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
}

Test(rocm, entry_past_the_last_gpu_ends_the_list) {
    select_gpus("rocminfo-mi300x8.txt", "7,8,0", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[9].uuid);
    select_gpus("rocminfo-mi25x3.txt", "3", NULL);
    cr_assert_eq(out.count, 0);
}

Test(rocm, repeated_entry_is_skipped) {
    select_gpus("rocminfo-mi300x8.txt", "1,1,0", NULL);
    cr_assert_eq(out.count, 2);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[3].uuid);
    cr_assert_str_eq(out.gpu[1].uuid, agents.gpu[2].uuid);
    /* the same GPU named by index and by Uuid is a repeat as well */
    select_gpus("rocminfo-mi300x8.txt", "0,GPU-0aaaaaaaaaaaaaa0,1", NULL);
    cr_assert_eq(out.count, 2);
}

Test(rocm, one_pair_of_double_quotes_is_dropped) {
    select_gpus("rocminfo-mi300x8.txt", "\"0,2\"", NULL);
    cr_assert_eq(out.count, 2);
    select_gpus("rocminfo-mi300x8.txt", NULL, "\"3\"");
    cr_assert_eq(out.count, 1);
    select_gpus("rocminfo-mi300x8.txt", "\"\"0\"\"", NULL);
    cr_assert_eq(out.count, 0, "only one pair is dropped");
}

Test(rocm, variable_in_use_set_to_nothing_hides_every_gpu) {
    select_gpus("rocminfo-mi300x8.txt", "", "0,1");
    cr_assert_eq(out.count, 0);
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
    select_gpus("rocminfo-mi300x8.txt", NULL, "");
    cr_assert_eq(out.count, 0);
}

/* mi300x8 with the second GPU's marketing name replaced by one the allowlist refuses */
static void load_with_bad_name(void) {
    buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(file_read_all("tests/data/probe/rocminfo-mi300x8.txt", &b), PACER_OK);
    char *second = strstr(strstr(b.data, "Agent 4"), "AMD Instinct MI300X");
    cr_assert_not_null(second);
    memcpy(second, "host#1 / MI300", 14); /* '#' is outside the allowlist */
    cr_assert_eq(probe_rocminfo_parse(b.data, b.len, &agents), PACER_OK);
    buf_free(&b);
    cr_assert_str_eq(agents.gpu[3].name, "");
}

Test(rocm, unnamed_gpu_keeps_its_place_and_records_nothing) {
    load_with_bad_name();
    probe_rocm_select(&agents, "1", NULL, &out);
    cr_assert_eq(out.count, 0, "never the next card");
    probe_rocm_select(&agents, "1,2", NULL, &out);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].uuid, agents.gpu[4].uuid);
}

Test(rocm, unnamed_kept_gpu_makes_source_partial) {
    load_with_bad_name();
    probe_rocm_select(&agents, NULL, NULL, &out);
    cr_assert_eq(out.count, 7);
    cr_assert_eq(out.source, PROBE_SOURCE_PARTIAL);
    probe_rocm_select(&agents, "0,2", NULL, &out);
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED, "the unnamed GPU is not kept");
}

Test(rocm, placeholder_uuid_gpu_xx_counts_as_none_printed) {
    /* consumer cards and APUs print "GPU-XX": no id to match, so a GPU- entry cannot be resolved */
    load_agents("rocminfo-apu-5500u.txt");
    cr_assert_str_eq(agents.gpu[1].uuid, "");
    select_gpus("rocminfo-apu-5500u.txt", "GPU-XX", NULL);
    cr_assert_eq(out.count, 0);
    cr_assert_eq(out.source, PROBE_SOURCE_PARTIAL);
}

Test(rocm, unmatched_gpu_entry_with_some_uuid_missing_is_partial) {
    /* mi300x8 with the third GPU's Uuid not printed: an unmatched GPU- entry may name it */
    buf b;
    buf_init(&b, 1 << 20);
    cr_assert_eq(file_read_all("tests/data/probe/rocminfo-mi300x8.txt", &b), PACER_OK);
    char *u = strstr(b.data, "GPU-2cccccccccccccc2");
    cr_assert_not_null(u);
    memset(u, ' ', strlen("GPU-2cccccccccccccc2"));
    cr_assert_eq(probe_rocminfo_parse(b.data, b.len, &agents), PACER_OK);
    buf_free(&b);
    probe_rocm_select(&agents, "0,GPU-77aa", NULL, &out);
    cr_assert_eq(out.count, 1);
    cr_assert_eq(out.source, PROBE_SOURCE_PARTIAL);
    /* every Uuid printed (the unmodified capture): the same entry is just invalid */
    select_gpus("rocminfo-mi300x8.txt", "0,GPU-77aa", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
}

Test(rocm, unmatched_gpu_entry_without_printed_uuid_is_partial) {
    select_gpus("rocminfo-mi25x3.txt", "GPU-4a1f6e0c", NULL);
    cr_assert_eq(out.count, 0);
    cr_assert_eq(out.source, PROBE_SOURCE_PARTIAL);
    select_gpus("rocminfo-mi25x3.txt", "0,GPU-4a1f6e0c", NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_eq(out.source, PROBE_SOURCE_PARTIAL);
}

Test(rocm, apu_graphics_is_unified_discrete_is_dedicated) {
    /* a real capture: Ryzen 5 5500U and its gfx90c (ROCm/ROCm issue 4548) */
    select_gpus("rocminfo-apu-5500u.txt", NULL, NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].name, "AMD Radeon Graphics");
    cr_assert(out.gpu[0].unified);
    cr_assert_eq(out.gpu[0].memory_bytes, 2953000ull * 1024, "the GPU agent's first global pool");
    cr_assert_eq(out.gpu[0].compute_units, 7);
    cr_assert_str_eq(out.gpu[0].driver, "6.10.5");
    cr_assert_eq(out.source, PROBE_SOURCE_PROBED);
    /* a real capture: Ryzen 7 7840HS and its Radeon 780M (ROCm/ROCm issue 6018) */
    select_gpus("rocminfo-apu-780m.txt", NULL, NULL);
    cr_assert_eq(out.count, 1);
    cr_assert_str_eq(out.gpu[0].name, "AMD Radeon 780M Graphics");
    cr_assert(out.gpu[0].unified);
    cr_assert_eq(out.gpu[0].memory_bytes, 24558048ull * 1024);
    cr_assert_eq(out.gpu[0].compute_units, 12);
    select_gpus("rocminfo-mi300x8.txt", NULL, NULL);
    cr_assert(!out.gpu[0].unified);
    select_gpus("rocminfo-mi25x3.txt", NULL, NULL);
    cr_assert(!out.gpu[2].unified);
}

Test(rocm, in_kernel_driver_has_no_version) {
    select_gpus("rocminfo-mi25x3.txt", NULL, NULL);
    cr_assert_str_eq(out.gpu[0].driver, "");
    select_gpus("rocminfo-mi300x8.txt", NULL, NULL);
    cr_assert_str_eq(out.gpu[0].driver, "6.8.5");
}

Test(rocm, amd_cpu_name_w_slash_is_written_with) {
    load_agents("rocminfo-apu-780m.txt");
    cr_assert_str_eq(agents.gpu[0].name, "AMD Ryzen 7 7840HS with Radeon 780M Graphics");
    char name[128] = "AMD Ryzen 9 PRO 7940HS w/ Radeon 780M Graphics";
    probe_name_normalise(name, sizeof name);
    cr_assert_str_eq(name, "AMD Ryzen 9 PRO 7940HS with Radeon 780M Graphics");
}

Test(rocm, not_rocminfo_output_is_rejected) {
    const char *text = "ROCk module is NOT loaded, possibly no GPU devices\n";
    cr_assert_neq(probe_rocminfo_parse(text, strlen(text), &agents), PACER_OK);
}

/* probe_collect with fake tools: a script that prints a fixture */
static char *fake_tool(const char *fixture) {
    static int n;
    char *path = malloc(256);
    char cwd[1024];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(path, 256, "/tmp/pacer-probe-tool-%d-%d.sh", (int)getpid(), n++);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "#!/bin/sh\nexec cat '%s/tests/data/probe/%s'\n", cwd, fixture);
    fclose(f);
    chmod(path, 0755);
    return path;
}

Test(rocm, rocr_visible_devices_is_not_applied_again) {
    /* rocminfo already applied ROCR_VISIBLE_DEVICES: what it prints is all there is, so
     * probe_collect, which reads the environment, must not narrow the list again */
    char *tool = fake_tool("rocminfo-mi25x3.txt");
    probe_options opt = {.rocminfo = tool, .nvidia_smi = "/nonexistent/nvidia-smi"};
    unsetenv("HIP_VISIBLE_DEVICES");
    unsetenv("CUDA_VISIBLE_DEVICES");
    cr_assert_eq(setenv("ROCR_VISIBLE_DEVICES", "0", 1), 0);
    json_t *hw = NULL;
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    unsetenv("ROCR_VISIBLE_DEVICES");
    unlink(tool);
    free(tool);
    cr_assert_eq(json_array_size(json_object_get(hw, "gpus")), 3);
    json_decref(hw);
}

Test(rocm, without_rocminfo_gpus_stay_unknown) {
    probe_options opt = {.rocminfo = "/nonexistent/rocminfo", .nvidia_smi = "/nonexistent/nvidia-smi"};
    json_t *hw = NULL;
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    cr_assert_str_eq(json_string_value(json_object_get(hw, "gpus_source")), "unknown");
    cr_assert_eq(json_array_size(json_object_get(hw, "gpus")), 0);
    json_decref(hw);
}

Test(rocm, collect_records_gpus_and_never_the_uuid) {
    char *tool = fake_tool("rocminfo-mi300x8.txt");
    probe_options opt = {.rocminfo = tool, .nvidia_smi = "/nonexistent/nvidia-smi"};
    unsetenv("HIP_VISIBLE_DEVICES");
    setenv("CUDA_VISIBLE_DEVICES", "1,3", 1);
    json_t *hw = NULL;
    cr_assert_eq(probe_collect(&opt, &hw), PACER_OK);
    unsetenv("CUDA_VISIBLE_DEVICES");
    unlink(tool);
    free(tool);
    json_t *gpus = json_object_get(hw, "gpus");
    cr_assert_eq(json_array_size(gpus), 2);
    json_t *g = json_array_get(gpus, 0);
    cr_assert_str_eq(json_string_value(json_object_get(g, "name")), "AMD Instinct MI300X");
    cr_assert_str_eq(json_string_value(json_object_get(g, "memory")), "dedicated");
    cr_assert_str_eq(json_string_value(json_object_get(g, "driver_version")), "6.8.5");
    cr_assert_eq(json_integer_value(json_object_get(g, "cores")), 304);
    cr_assert_str_eq(json_string_value(json_object_get(hw, "gpus_source")), "probed");
    char *text = json_dumps(hw, 0);
    cr_assert_null(strstr(text, "GPU-"), "%s", text);
    cr_assert_null(strstr(text, "1bbbbbbbbbbbbbb1"));
    free(text);
    json_decref(hw);
}
