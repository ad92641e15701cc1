/* power.c - the machine's power state from /sys/class/power_supply: on mains with a
 * battery ("ac"), on battery, or no battery at all ("ac-only"), and the runner's check. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "base/fileio.h"
#include "probe/probe_internal.h"

static const char *const power_names[] = {"unknown", "ac", "battery", "ac-only"};

const char *probe_power_name(probe_power p) {
    return (unsigned)p < sizeof power_names / sizeof power_names[0] ? power_names[p] : "unknown";
}

static bool starts(const char *s, const char *prefix) {
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

probe_power probe_power_decide(size_t n, const char *const *types, const char *const *status,
                               const char *const *online) {
    bool battery = false, mains_online = false, discharging = false, charging = false;
    for (size_t i = 0; i < n; i++) {
        if (starts(types[i], "Battery")) {
            battery = true;
            discharging |= starts(status[i], "Discharging");
            charging |= starts(status[i], "Charging") || starts(status[i], "Full") ||
                        starts(status[i], "Not charging");
        } else if (starts(types[i], "Mains") || starts(types[i], "USB")) {
            mains_online |= starts(online[i], "1");
        }
    }
    if (!battery) return PROBE_POWER_AC_ONLY;
    if (mains_online || (charging && !discharging)) return PROBE_POWER_AC;
    if (discharging) return PROBE_POWER_BATTERY;
    return PROBE_POWER_UNKNOWN;
}

enum { POWER_MAX_ENTRIES = 16 };

probe_power probe_power_read(const char *sys_root) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/sys/class/power_supply", sys_root ? sys_root : "");
    DIR *d = opendir(dir);
    if (!d) {
        char cls[4096];
        struct stat st;
        snprintf(cls, sizeof cls, "%s/sys/class", sys_root ? sys_root : "");
        return stat(cls, &st) == 0 ? PROBE_POWER_AC_ONLY : PROBE_POWER_UNKNOWN;
    }
    buf bufs[POWER_MAX_ENTRIES][3];
    const char *v[3][POWER_MAX_ENTRIES];
    static const char *const files[3] = {"type", "status", "online"};
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && n < POWER_MAX_ENTRIES) {
        if (de->d_name[0] == '.') continue;
        for (int f = 0; f < 3; f++) {
            char path[4096 + 300];
            buf_init(&bufs[n][f], 256);
            snprintf(path, sizeof path, "%s/%s/%s", dir, de->d_name, files[f]);
            v[f][n] = file_read_all(path, &bufs[n][f]) == PACER_OK && bufs[n][f].data ? bufs[n][f].data : NULL;
        }
        n++;
    }
    closedir(d);
    probe_power p = probe_power_decide(n, v[0], v[1], v[2]);
    for (size_t i = 0; i < n; i++)
        for (int f = 0; f < 3; f++) buf_free(&bufs[i][f]);
    return p;
}

pacer_err power_check(const char *sys_root, probe_power expected, probe_power *now) {
    probe_power p = probe_power_read(sys_root);
    if (now) *now = p;
    return p == expected ? PACER_OK : PACER_ERR_STATE;
}

void power_watch_start(power_watch *w, const char *sys_root) {
    w->sys_root = sys_root;
    w->expected = w->now = probe_power_read(sys_root);
    w->next_ns = clock_now_ns() + POWER_WATCH_PERIOD_NS;
    w->changed = false;
}

pacer_err power_watch_poll(power_watch *w, bool force) {
    int64_t t = clock_now_ns();
    if (force || t >= w->next_ns) {
        w->changed |= power_check(w->sys_root, w->expected, &w->now) != PACER_OK;
        w->next_ns = t + POWER_WATCH_PERIOD_NS;
    }
    return w->changed ? PACER_ERR_STATE : PACER_OK;
}
