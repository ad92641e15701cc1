/* names.c - the text rules shared by the probe sources (linux, nvidia, rocm, macos):
 * normalising a CPU or GPU name, the allow-list a device name must pass before it is
 * recorded (no serial numbers, UUID pieces or MACs), and reading a tool's output line by
 * line. Pure: no I/O. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "probe/probe_internal.h"

void probe_name_normalise(char *s, size_t cap) {
    char tmp[256];
    size_t o = 0;
    bool blank = false;
    for (const char *p = s; *p && o + 8 < sizeof tmp; p++) {
        if (isspace((unsigned char)*p)) {
            blank = o > 0;
            continue;
        }
        if (blank) tmp[o++] = ' ';
        blank = false;
        if (p[0] == 'w' && p[1] == '/' && (p[2] == ' ' || p[2] == '\0') && o > 0 && tmp[o - 1] == ' ') {
            memcpy(tmp + o, "with", 4);
            o += 4;
            p++;
            continue;
        }
        tmp[o++] = *p;
    }
    tmp[o] = '\0';
    snprintf(s, cap, "%s", tmp);
}

bool probe_name_allowed(const char *s) {
    size_t n = strlen(s), hexrun = 0;
    bool letter = false;
    if (n == 0 || n > 80) return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (isalpha(c)) letter = true;
        if (!isalnum(c) && !strchr(" ._()+/-@,", c)) return false;
        hexrun = isxdigit(c) ? hexrun + 1 : 0;
        if (hexrun >= 12) return false; /* serial numbers, UUID pieces, MACs */
    }
    return letter;
}

bool probe_line_copy(const char *text, size_t n, size_t *at, char *line, size_t cap) {
    size_t i = *at, e = i;
    if (i >= n || cap == 0) return false;
    while (e < n && text[e] != '\n') e++;
    size_t len = e - i < cap - 1 ? e - i : cap - 1;
    memcpy(line, text + i, len);
    line[len] = '\0';
    *at = e + 1;
    return true;
}
