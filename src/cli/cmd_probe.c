/* cmd_probe.c - 'pacer probe [--json] [--model PATH [--read-sample]] [--no-gpus]': prints
 * what a receipt would record about this machine, each fact with its source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "cli/cli.h"
#include "probe/probe.h"

static void probe_usage(FILE *f) {
    fprintf(f, "usage: pacer probe [--json] [--model PATH [--read-sample]] [--no-gpus]\n\n"
               "Shows the hardware facts a receipt records about this machine and where each\n"
               "came from (probed, partial, unknown). Nothing identifying is shown.\n\n"
               "  --json         the hardware object exactly as a receipt holds it\n"
               "  --model PATH   report the volume that holds PATH (default: the current directory)\n"
               "  --read-sample  read up to 2 GB of PATH uncached and report GB/s\n"
               "  --no-gpus      do not run nvidia-smi or rocminfo\n");
}

/* Prints one value as people read it. */
static void print_value(const char *label, const json_t *v) {
    char text[256];
    if (json_is_string(v)) snprintf(text, sizeof text, "%s", json_string_value(v));
    else if (json_is_integer(v)) snprintf(text, sizeof text, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v)) snprintf(text, sizeof text, "%.3f", json_real_value(v));
    else if (json_is_array(v)) {
        size_t i, o = 0;
        json_t *e;
        text[0] = '\0';
        json_array_foreach(v, i, e) o += (size_t)snprintf(text + o, o < sizeof text ? sizeof text - o : 0, "%s%s",
                                                            i ? " " : "", json_is_string(e) ? json_string_value(e) : "?");
        if (!i) snprintf(text, sizeof text, "(none)");
    } else snprintf(text, sizeof text, "unknown");
    printf("  %-22s %s\n", label, text);
}

static void print_section(const char *name, const json_t *sec) {
    const char *key;
    json_t *v;
    printf("%s [%s]\n", name, json_get_str(sec, "source", "unknown"));
    json_object_foreach((json_t *)sec, key, v) {
        if (strcmp(key, "source") == 0) continue;
        if (json_is_object(v)) {
            const char *k2;
            json_t *v2;
            json_object_foreach(v, k2, v2) {
                char label[64];
                snprintf(label, sizeof label, "%s.%s", key, k2);
                print_value(label, v2);
            }
        } else print_value(key, v);
    }
}

int cmd_probe(int argc, char **argv) {
    probe_options opt = {0};
    bool as_json = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) as_json = true;
        else if (strcmp(argv[i], "--read-sample") == 0) opt.read_sample = true;
        else if (strcmp(argv[i], "--no-gpus") == 0) opt.no_gpus = true;
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) opt.model_path = argv[++i];
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            probe_usage(stdout);
            return 0;
        } else {
            cli_error("probe: unknown argument '%s'", argv[i]);
            probe_usage(stderr);
            return 1;
        }
    }
    if (opt.read_sample && !opt.model_path) {
        cli_error("probe: --read-sample needs --model PATH");
        return 1;
    }
    json_t *hw = NULL;
    pacer_err rc = probe_collect(&opt, &hw);
    if (rc) {
        cli_error("probe: %s", pacer_strerror(rc));
        return 1;
    }
    if (as_json) {
        char *text = json_dumps(hw, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
        if (text) puts(text);
        free(text);
    } else {
        static const char *const sections[] = {"cpu", "os", "power", "volume"};
        printf("hardware [%s]\n", json_get_str(hw, "source", "unknown"));
        print_value("memory_bytes", json_object_get(hw, "memory_bytes"));
        for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
            print_section(sections[i], json_object_get(hw, sections[i]));
        json_t *gpus = json_object_get(hw, "gpus");
        printf("gpus [%s]\n", json_get_str(hw, "gpus_source", "unknown"));
        size_t i;
        json_t *g;
        json_array_foreach(gpus, i, g) {
            char label[32];
            snprintf(label, sizeof label, "gpu %zu", i);
            print_section(label, g);
        }
        if (!json_array_size(gpus)) printf("  (none recorded)\n");
    }
    json_decref(hw);
    return 0;
}
