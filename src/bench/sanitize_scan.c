/* sanitize_scan.c - the detectors of the sanitizer. Each one walks normalized text once and
 * marks the bytes of what it finds with its class; a byte keeps the first class that claims
 * it, so the order of san_scan_all() is the priority (a URL is not also a path). ASCII
 * character classes only: the patterns are ASCII, and bytes of other characters never
 * start or continue a match except inside URLs and paths. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bench/sanitize_internal.h"

static bool c_digit(unsigned c) { return c >= '0' && c <= '9'; }
static bool c_alpha(unsigned c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static bool c_alnum(unsigned c) { return c_digit(c) || c_alpha(c); }
static bool c_hex(unsigned c) { return c_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
static bool c_upper(unsigned c) { return c >= 'A' && c <= 'Z'; }
static bool c_in(unsigned c, const char *set) { return c && strchr(set, (int)c) != NULL; }
static bool c_word(unsigned c) { return c_alnum(c) || c == '_'; }

static bool is_free(const san_scan *s, size_t i) { return i < s->n && s->m[i] == SAN_KEEP; }

/* Gives the free bytes of [a, b) the class `cls`. */
static void mark(san_scan *s, size_t a, size_t b, san_class cls) {
    for (; a < b && a < s->n; a++)
        if (s->m[a] == SAN_KEEP) s->m[a] = (uint8_t)cls;
}

/* End of [a, e) without trailing bytes of `set`. */
static size_t trim_end(const unsigned char *t, size_t a, size_t e, const char *set) {
    while (e > a && c_in(t[e - 1], set)) e--;
    return e;
}

/* Literal placeholders (from an earlier pass, or sent by the server) are kept as they are
 * and break every match, so sanitizing twice changes nothing. */
static void scan_placeholders(san_scan *s) {
    for (size_t i = 0; i < s->n; i++) {
        if (s->t[i] != '<') continue;
        for (int k = 1; k <= SAN_N_CLASSES; k++) {
            const char *ph = k < SAN_N_CLASSES ? san_classes[k].placeholder : "<removed>";
            size_t len = strlen(ph);
            if (i + len <= s->n && memcmp(s->t + i, ph, len) == 0) {
                memset(s->m + i, SAN_PLACEHOLDER, len);
                i += len - 1;
                break;
            }
        }
    }
}

static bool url_char(unsigned c) { return c > 0x20 && c != 0x7f && !c_in(c, "\"'<>`"); }

/* scheme://anything-up-to-a-blank-or-quote */
static void scan_urls(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 1; i + 3 <= s->n; i++) {
        if (t[i] != ':' || t[i + 1] != '/' || t[i + 2] != '/' || !is_free(s, i)) continue;
        size_t a = i;
        while (a > 0 && is_free(s, a - 1) && (c_alnum(t[a - 1]) || c_in(t[a - 1], "+.-"))) a--;
        while (a < i && !c_alpha(t[a])) a++;
        if (a == i) continue;
        size_t e = i + 3;
        while (e < s->n && is_free(s, e) && url_char(t[e])) e++;
        e = trim_end(t, i + 3, e, ".,;:!?)]}");
        mark(s, a, e, SAN_URL);
        i = e > i ? e - 1 : i;
    }
}

/* local@domain, also user@host without a dot */
static void scan_emails(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (t[i] != '@' || !is_free(s, i)) continue;
        size_t l = i, r = i + 1;
        while (l > 0 && is_free(s, l - 1) && (c_alnum(t[l - 1]) || c_in(t[l - 1], "._%+-"))) l--;
        while (r < s->n && is_free(s, r) && (c_alnum(t[r]) || c_in(t[r], ".-"))) r++;
        r = trim_end(t, i + 1, r, ".-");
        if (l == i || r == i + 1) continue;
        mark(s, l, r, SAN_EMAIL);
        i = r - 1;
    }
}

static bool path_char(unsigned c) { return c > 0x20 && c != 0x7f && !c_in(c, "\"'`<>|;,()[]{}"); }
static bool path_boundary(unsigned c) { return c == ' ' || c_in(c, "\"'`=:([{<>,;|"); }

/* Length of the opening of a path at t[i], 0 when none starts there: /x, //x, ~/, ~user/,
 * ./, ../, C:\ or C:/, \\server, $VAR/. */
static size_t path_opening(const unsigned char *t, size_t n, size_t i) {
    unsigned c = t[i], d = i + 1 < n ? t[i + 1] : 0, e = i + 2 < n ? t[i + 2] : 0;
    size_t j = i + 1;
    switch (c) {
    case '/': return path_char(d) ? 1 : 0;
    case '~':
        while (j < n && (c_alnum(t[j]) || c_in(t[j], "._-"))) j++;
        return j < n && t[j] == '/' ? j - i + 1 : 0;
    case '.': return d == '/' ? 2 : d == '.' && e == '/' ? 3 : 0;
    case '\\': return d == '\\' && c_alnum(e) ? 2 : 0;
    case '$':
        while (j < n && (c_upper(t[j]) || c_digit(t[j]) || t[j] == '_')) j++;
        return j > i + 1 && j < n && t[j] == '/' ? j - i + 1 : 0;
    default: return c_alpha(c) && d == ':' && (e == '\\' || e == '/') ? 3 : 0;
    }
}

/* A path runs to a blank or a delimiter; a following word that holds a separator too
 * continues it (a directory name with a space in it). */
static void scan_paths(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || (i > 0 && !path_boundary(t[i - 1]))) continue;
        size_t open = path_opening(t, s->n, i);
        if (!open) continue;
        size_t e = i + open;
        while (e < s->n && is_free(s, e) && path_char(t[e])) e++;
        while (e + 1 < s->n && t[e] == ' ') {
            size_t w = e + 1, we = w;
            bool sep = false;
            for (; we < s->n && is_free(s, we) && path_char(t[we]); we++) sep |= t[we] == '/' || t[we] == '\\';
            if (!sep || memmem(t + w, we - w, "://", 3)) break;
            e = we;
        }
        e = trim_end(t, i, e, ".,:;!?");
        bool named = false;
        for (size_t k = i; k < e && !named; k++) named = c_alnum(t[k]) || t[k] >= 0x80;
        if (!named) continue;
        mark(s, i, e, SAN_PATH);
        i = e - 1;
    }
}

/* Length of a dotted quad at t[i] (0: none); four parts of 0..255, not part of a longer
 * run of numbers (a version 1.2.3.4.5 is none). */
static size_t ipv4_len(const unsigned char *t, size_t n, size_t i) {
    size_t j = i;
    for (int k = 0; k < 4; k++) {
        if (k) {
            if (j >= n || t[j] != '.') return 0;
            j++;
        }
        size_t d = j;
        unsigned v = 0;
        while (j < n && c_digit(t[j]) && j - d < 3) v = v * 10 + (t[j++] - '0');
        if (j == d || v > 255) return 0;
    }
    if (j < n && c_digit(t[j])) return 0;
    if (j + 1 < n && t[j] == '.' && c_digit(t[j + 1])) return 0;
    return j - i;
}

/* Length of ":PORT" (1..5 digits, not followed by more of an address) at t[i], else 0. */
static size_t port_len(const unsigned char *t, size_t n, size_t i) {
    if (i >= n || t[i] != ':') return 0;
    size_t j = i + 1;
    while (j < n && c_digit(t[j]) && j - i <= 5) j++;
    if (j == i + 1 || (j < n && (c_alnum(t[j]) || t[j] == '.' || t[j] == ':'))) return 0;
    return j - i;
}

static void scan_ipv4(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || !c_digit(t[i]) || (i > 0 && (c_digit(t[i - 1]) || t[i - 1] == '.'))) continue;
        size_t len = ipv4_len(t, s->n, i);
        if (!len) continue;
        size_t e = i + len;
        e += port_len(t, s->n, e);
        if (e + 1 < s->n && t[e] == '/' && c_digit(t[e + 1])) /* a CIDR prefix length */
            for (e++; e < s->n && c_digit(t[e]); e++) {}
        mark(s, i, e, SAN_ADDRESS);
        i = e - 1;
    }
}

/* Whether p[0..len) (hex digits, ':' and '.') is an IPv6 address: eight groups of 1..4 hex
 * digits, or fewer with one "::", the last two may be a dotted quad. */
static bool ipv6_ok(const unsigned char *p, size_t len) {
    int groups = 0;
    bool gap = false;
    size_t i = 0;
    if (len >= 2 && p[0] == ':' && p[1] == ':') gap = true, i = 2;
    else if (len && p[0] == ':') return false;
    while (i < len) {
        size_t g = i;
        while (i < len && c_hex(p[i]) && i - g < 5) i++;
        if (i < len && p[i] == '.') {
            if (ipv4_len(p, len, g) != len - g) return false;
            groups += 2;
            break;
        }
        if (i == g || i - g > 4) return false;
        groups++;
        if (i == len) break;
        if (p[i++] != ':') return false;
        if (i < len && p[i] == ':') {
            if (gap) return false;
            gap = true;
            i++;
        } else if (i == len) {
            return false;
        }
    }
    return gap ? groups <= 7 && groups >= 1 : groups == 8;
}

static void scan_ipv6(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || !(c_hex(t[i]) || t[i] == ':')) continue;
        if (i > 0 && (c_alnum(t[i - 1]) || c_in(t[i - 1], ":._-"))) continue;
        size_t e = i;
        int colons = 0;
        while (e < s->n && is_free(s, e) && (c_hex(t[e]) || t[e] == ':' || t[e] == '.')) colons += t[e++] == ':';
        size_t next = e;
        e = trim_end(t, i, e, ".");
        bool ends_word = e == s->n || !(c_word(t[e]) || t[e] == '-');
        if (colons >= 2 && ends_word && ipv6_ok(t + i, e - i)) {
            if (e + 1 < s->n && t[e] == '%' && c_alnum(t[e + 1])) /* a zone: %eth0 */
                for (e++; e < s->n && (c_alnum(t[e]) || t[e] == '_'); e++) {}
            mark(s, i, e, SAN_ADDRESS);
            next = e;
        }
        i = next > i ? next - 1 : i;
    }
}

/* Length of hex groups of the given lengths joined by `sep` at t[i] (0: none). */
static size_t hex_groups(const unsigned char *t, size_t n, size_t i, const unsigned char *lens, int k, unsigned sep) {
    size_t j = i;
    for (int g = 0; g < k; g++) {
        if (g) {
            if (j >= n || t[j] != sep) return 0;
            j++;
        }
        for (unsigned x = 0; x < lens[g]; x++, j++)
            if (j >= n || !c_hex(t[j])) return 0;
    }
    return j - i;
}

/* UUIDs (8-4-4-4-12) and MAC addresses (six pairs joined by ':' or '-'). */
static void scan_ids(san_scan *s) {
    static const unsigned char uuid[5] = {8, 4, 4, 4, 12}, mac[6] = {2, 2, 2, 2, 2, 2};
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || !c_hex(t[i]) || (i > 0 && c_alnum(t[i - 1]))) continue;
        size_t len = hex_groups(t, s->n, i, uuid, 5, '-');
        if (!len) len = hex_groups(t, s->n, i, mac, 6, ':');
        if (!len) len = hex_groups(t, s->n, i, mac, 6, '-');
        if (!len || (i + len < s->n && c_alnum(t[i + len]))) continue;
        mark(s, i, i + len, SAN_ID);
        i += len - 1;
    }
}

/* Well-known prefixes of keys and tokens, and how many characters must follow. */
static const struct {
    const char *prefix;
    size_t min_body;
} san_key_prefixes[] = {
    {"sk-", 16},     {"sk_live_", 16}, {"sk_test_", 16}, {"rk_live_", 16},    {"pk_live_", 16}, {"hf_", 16},
    {"ghp_", 16},    {"gho_", 16},     {"ghu_", 16},     {"ghs_", 16},        {"ghr_", 16},     {"github_pat_", 16},
    {"glpat-", 16},  {"xoxb-", 10},    {"xoxp-", 10},    {"xoxa-", 10},       {"xoxs-", 10},    {"AKIA", 16},
    {"ASIA", 16},    {"AIza", 30},     {"eyJ", 16},      {"npm_", 16},        {"pypi-", 16},    {"nvapi-", 16},
    {"gsk_", 16},    {"r8_", 16},
};

static bool key_char(unsigned c) { return c_alnum(c) || c_in(c, "_-."); }

static void scan_key_prefixes(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || (i > 0 && key_char(t[i - 1]))) continue;
        for (size_t k = 0; k < sizeof san_key_prefixes / sizeof san_key_prefixes[0]; k++) {
            size_t pl = strlen(san_key_prefixes[k].prefix);
            if (i + pl > s->n || memcmp(t + i, san_key_prefixes[k].prefix, pl) != 0) continue;
            size_t e = i + pl;
            while (e < s->n && is_free(s, e) && key_char(t[e])) e++;
            e = trim_end(t, i + pl, e, ".");
            if (e - i - pl < san_key_prefixes[k].min_body) continue;
            mark(s, i, e, SAN_SECRET);
            i = e - 1;
            break;
        }
    }
}

/* Words after which a value is a secret (or a host name). `scheme`: an HTTP auth scheme,
 * whose value needs no ':' or '=' and no digit. */
static const struct {
    const char *word;
    san_class cls;
    bool scheme;
} san_keywords[] = {
    {"bearer", SAN_SECRET, true},  {"basic", SAN_SECRET, true},         {"token", SAN_SECRET, false},
    {"access_token", SAN_SECRET, false}, {"refresh_token", SAN_SECRET, false}, {"api_key", SAN_SECRET, false},
    {"api-key", SAN_SECRET, false}, {"apikey", SAN_SECRET, false},       {"x-api-key", SAN_SECRET, false},
    {"password", SAN_SECRET, false}, {"passwd", SAN_SECRET, false},      {"secret", SAN_SECRET, false},
    {"client_secret", SAN_SECRET, false}, {"authorization", SAN_SECRET, false}, {"host", SAN_HOST, false},
    {"hostname", SAN_HOST, false},
};
#define SAN_N_KEYWORDS (sizeof san_keywords / sizeof san_keywords[0])

static bool kw_char(unsigned c) { return c_word(c) || c == '-'; }

/* The keyword at t[i] (a whole word, any case), or -1. */
static int keyword_at(const unsigned char *t, size_t n, size_t i) {
    if (i > 0 && kw_char(t[i - 1])) return -1;
    for (size_t k = 0; k < SAN_N_KEYWORDS; k++) {
        size_t wl = strlen(san_keywords[k].word);
        if (i + wl > n || strncasecmp((const char *)t + i, san_keywords[k].word, wl) != 0) continue;
        if (i + wl < n && kw_char(t[i + wl])) continue;
        return (int)k;
    }
    return -1;
}

static void scan_keywords(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n; i++) {
        if (!is_free(s, i) || !c_alpha(t[i])) continue;
        int k = keyword_at(t, s->n, i);
        if (k < 0) continue;
        size_t j = i + strlen(san_keywords[k].word);
        bool sep = false;
        while (j < s->n && c_in(t[j], " \t\"'")) j++;
        if (j < s->n && (t[j] == ':' || t[j] == '=')) sep = true, j++;
        while (j < s->n && c_in(t[j], " \t\"'")) j++;
        if (keyword_at(t, s->n, j) >= 0) continue; /* "Authorization: Bearer X": the scheme takes X */
        bool host = san_keywords[k].cls == SAN_HOST;
        size_t v = j;
        bool digit = false, alpha = false, punct = false;
        while (j < s->n && is_free(s, j) && (c_alnum(t[j]) || c_in(t[j], host ? ".-" : "._~+/=-"))) {
            digit |= c_digit(t[j]);
            alpha |= c_alpha(t[j]);
            punct |= !c_alnum(t[j]);
            j++;
        }
        j = trim_end(t, v, j, ".");
        size_t len = j - v;
        bool hit = host ? len >= 2 && alpha && (sep || digit || punct)
                        : len >= 8 && (san_keywords[k].scheme || sep || digit);
        if (hit) mark(s, v, j, san_keywords[k].cls);
    }
}

/* A run of 20+ letters and digits that mixes both (and is not all hex, which is what hashes
 * look like), or 32+ letters of both cases: the shape of a random key. */
static bool segment_random(const unsigned char *p, size_t len) {
    if (len < 20) return false;
    bool digit = false, lower = false, upper = false, hex = true;
    for (size_t i = 0; i < len; i++) {
        digit |= c_digit(p[i]);
        upper |= c_upper(p[i]);
        lower |= c_alpha(p[i]) && !c_upper(p[i]);
        hex &= c_hex(p[i]);
    }
    if (hex) return false;
    return (digit && (lower || upper)) || (len >= 32 && lower && upper);
}

static void scan_random_tokens(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n;) {
        if (!is_free(s, i) || !kw_char(t[i])) {
            i++;
            continue;
        }
        size_t a = i;
        while (i < s->n && is_free(s, i) && kw_char(t[i])) i++;
        bool hit = false;
        for (size_t g = a; g < i && !hit;) {
            size_t h = g;
            while (h < i && c_alnum(t[h])) h++;
            hit = segment_random(t + g, h - g);
            g = h + 1;
        }
        if (hit) mark(s, a, i, SAN_SECRET);
    }
}

/* File-name extensions: "model.gguf" is a file name, not a host. */
static const char *const san_file_exts[] = {
    "gguf", "bin", "safetensors", "json", "jsonl", "yaml", "yml", "toml", "txt", "md", "py", "pyc", "cc", "cpp",
    "hpp", "cu", "cuh", "rs", "go", "js", "ts", "so", "dylib", "dll", "exe", "pt", "pth", "onnx", "gz", "tar",
    "zip", "log", "cfg", "ini", "csv", "html", "htm", "xml", "model", "tiktoken", "sh", "lock", "png", "jpg",
    "svg", "pdf", "npz", "npy", "ckpt", "msgpack", "jinja", "engine", "plan", "mlpackage", "metal", "spv", NULL};

static bool is_file_ext(const unsigned char *p, size_t len) {
    for (int i = 0; san_file_exts[i]; i++)
        if (strlen(san_file_exts[i]) == len && strncasecmp((const char *)p, san_file_exts[i], len) == 0) return true;
    return false;
}

/* "torch.cuda.OutOfMemoryError": a lower-case letter followed by an upper-case one is code,
 * not a host name. */
static bool camel_case(const unsigned char *p, size_t len) {
    for (size_t i = 1; i < len; i++)
        if (c_upper(p[i]) && c_alpha(p[i - 1]) && !c_upper(p[i - 1])) return true;
    return false;
}

/* Words that come before ":NUMBER" in messages without being hosts ("line:42"). */
static bool is_port_word(const unsigned char *p, size_t len) {
    static const char *const words[] = {"line", "col", "column", "pos", "position", "offset", "index", "status",
                                        "code", "errno", "error", "port", "size", "len", "id", "step", NULL};
    for (int i = 0; words[i]; i++)
        if (strlen(words[i]) == len && strncasecmp((const char *)p, words[i], len) == 0) return true;
    return false;
}

static bool label_char(unsigned c) { return c_alnum(c) || c == '-'; }

/* Dotted names whose last label is 2+ letters and no file extension (gpu-7.example.net,
 * node3.cluster.local), and NAME:PORT; a path after either belongs to it. */
static void scan_hosts(san_scan *s) {
    const unsigned char *t = s->t;
    for (size_t i = 0; i < s->n;) {
        if (!is_free(s, i) || !c_alnum(t[i]) || (i > 0 && (label_char(t[i - 1]) || c_in(t[i - 1], "._")))) {
            i++;
            continue;
        }
        size_t j = i, labels = 0, last = i;
        bool last_alpha = false, letter = false;
        for (;;) {
            last = j;
            last_alpha = true;
            for (; j < s->n && is_free(s, j) && label_char(t[j]); j++) {
                last_alpha &= c_alpha(t[j]);
                letter |= c_alpha(t[j]);
            }
            labels++;
            if (j + 1 < s->n && t[j] == '.' && is_free(s, j) && is_free(s, j + 1) && c_alnum(t[j + 1])) {
                j++;
                continue;
            }
            break;
        }
        bool word_end = j == s->n || !(c_word(t[j]) || t[j] == '@');
        bool dotted = labels >= 2 && last_alpha && j - last >= 2 && !is_file_ext(t + last, j - last) &&
                      !camel_case(t + last, j - last);
        bool named = labels == 1 && letter && !is_port_word(t + i, j - i); /* gpubox:8080 */
        size_t port = dotted || named ? port_len(t, s->n, j) : 0;
        if (word_end && (dotted || port)) {
            size_t e = j + port;
            if (e < s->n && t[e] == '/')
                while (e < s->n && is_free(s, e) && path_char(t[e])) e++;
            mark(s, i, e, SAN_HOST);
        }
        i = j > i ? j : i + 1;
    }
}

/* The context's private names, whole words, any case (ASCII). */
static void scan_words(san_scan *s) {
    const sanitize_context *c = s->ctx;
    if (!c || !c->n_words) return;
    unsigned char *low = malloc(s->n + 1);
    if (!low) { /* cannot search: claim everything rather than let a name through */
        mark(s, 0, s->n, SAN_NAME);
        return;
    }
    for (size_t i = 0; i < s->n; i++) low[i] = c_upper(s->t[i]) ? (unsigned char)(s->t[i] | 0x20) : s->t[i];
    for (int w = 0; w < c->n_words; w++) {
        const char *word = c->words[w];
        size_t wl = strlen(word);
        for (const unsigned char *p = memmem(low, s->n, word, wl); p;) {
            size_t i = (size_t)(p - low), e = i + wl;
            bool start_ok = !c_word((unsigned char)word[0]) || i == 0 || !c_word(low[i - 1]);
            bool end_ok = !c_word((unsigned char)word[wl - 1]) || e == s->n || !c_word(low[e]);
            if (start_ok && end_ok) mark(s, i, e, SAN_NAME);
            p = i + 1 < s->n ? memmem(low + i + 1, s->n - i - 1, word, wl) : NULL;
        }
    }
    free(low);
}

/* Prompt runs: every 8 folded bytes in a row found in the context's window set. */
typedef struct prompt_state {
    san_scan *s;
    uint64_t key;
    size_t have;    /* folded bytes since the last break */
    size_t from[8]; /* source start of the last 8 folded bytes, by have % 8 */
} prompt_state;

static void prompt_byte(void *ctx, unsigned char c, size_t from, size_t to) {
    prompt_state *p = ctx;
    if (!c) {
        p->have = 0;
        return;
    }
    p->key = (p->key << 8) | c;
    p->from[p->have % 8] = from;
    p->have++;
    if (p->have >= 8 && san_window_has(p->s->ctx, p->key)) mark(p->s, p->from[p->have % 8], to, SAN_PROMPT);
}

static void scan_prompt_runs(san_scan *s) {
    if (!s->use_texts || !s->ctx || !s->ctx->count) return;
    prompt_state p = {.s = s};
    san_fold(s->t, s->n, s->m, prompt_byte, &p);
}

/* A match never ends inside a character: continuation bytes take their lead byte's class. */
static void extend_to_characters(san_scan *s) {
    for (size_t i = 1; i < s->n; i++)
        if ((s->t[i] & 0xC0) == 0x80 && s->m[i] == SAN_KEEP && s->m[i - 1] != SAN_KEEP) s->m[i] = s->m[i - 1];
    for (size_t i = s->n; i-- > 1;)
        if ((s->t[i] & 0xC0) == 0x80 && s->m[i] != SAN_KEEP && s->m[i - 1] == SAN_KEEP) s->m[i - 1] = s->m[i];
}

void san_scan_all(san_scan *s) {
    scan_placeholders(s);
    scan_urls(s);
    scan_emails(s);
    scan_paths(s);
    scan_ipv6(s); /* first: its last two groups may be a dotted quad */
    scan_ipv4(s);
    scan_ids(s);
    scan_key_prefixes(s);
    scan_keywords(s);
    scan_random_tokens(s);
    scan_hosts(s);
    scan_words(s);
    scan_prompt_runs(s);
    extend_to_characters(s);
}

void san_fold(const unsigned char *t, size_t n, const uint8_t *breaks, san_fold_fn emit, void *ctx) {
    bool space = false;
    size_t space_from = 0, space_to = 0;
    for (size_t i = 0; i < n;) {
        if (breaks && breaks[i] != SAN_KEEP) {
            space = false;
            emit(ctx, 0, i, i + 1);
            i++;
            continue;
        }
        unsigned c = t[i], out = c;
        size_t len = 1;
        bool ws = c <= ' ';
        if (c == '\\' && i + 1 < n && (!breaks || breaks[i + 1] == SAN_KEEP)) {
            unsigned d = t[i + 1];
            if (d == 'n' || d == 't' || d == 'r') ws = true, len = 2;
            else if (c_in(d, "\"'\\/")) out = d, len = 2;
        }
        if (ws) {
            if (!space) space_from = i;
            space = true;
            space_to = i + len;
        } else {
            if (space) emit(ctx, ' ', space_from, space_to);
            space = false;
            emit(ctx, (unsigned char)out, i, i + len);
        }
        i += len;
    }
    if (space) emit(ctx, ' ', space_from, space_to);
}
