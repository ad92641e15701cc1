/* cmd_publish.c - 'pacer bench publish RECEIPT', 'pacer bench login', 'pacer bench logout'
 * and 'bench --publish': shows what will be sent and asks first, refuses what a board would
 * not take before any credential is read, and never prints, saves or logs a token. */
#include "cli/cmd_publish.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/json.h"
#include "bench/credentials.h"
#include "bench/inspect.h"
#include "bench/receipt.h"
#include "cli/cli.h"

#define TOKEN_ENV "PACER_BENCHMARK_TOKEN"

static const char publish_usage[] =
    "usage: pacer bench publish RECEIPT [--yes] [--upload-url URL]\n"
    "       pacer bench login [--token-stdin] [--upload-url URL]\n"
    "       pacer bench logout [--upload-url URL]\n\n"
    "publish sends a saved receipt (never its drafts file) to a results board, after showing what\n"
    "will be sent and asking (--yes: without asking). The board is --upload-url, or the one\n"
    "logged into last. The token comes from $" TOKEN_ENV " (used for this run only, never\n"
    "saved or shown) or from 'login', which stores it in ~/.pacer/credentials.json (mode 0600)\n"
    "for that exact URL only. Boards are https://; plain http:// only to this machine.\n"
    "logout removes the stored tokens (--upload-url: only that board's).\n";

/* ---- shared steps ---- */

/* The board URL: `given`, else the one logged into last; normalized and checked. */
static int board_url(const char *given, char url[PUBLISH_URL_MAX]) {
    char stored[CREDENTIALS_URL_MAX], err[256];
    if (!given) {
        if (credentials_default_url(stored) != PACER_OK) {
            cli_error("no results board: pass --upload-url URL (or log in first: pacer bench login --upload-url URL)");
            return 1;
        }
        given = stored;
    }
    if (publish_url_check(given, url, err, sizeof err)) {
        cli_error("%s", err);
        return 1;
    }
    return 0;
}

/* The token for `url`: $PACER_BENCHMARK_TOKEN, else the stored one. */
static int board_token(const char *url, char token[CREDENTIALS_TOKEN_MAX]) {
    const char *env = getenv(TOKEN_ENV);
    if (env && env[0]) {
        if (strlen(env) >= CREDENTIALS_TOKEN_MAX) { cli_error("$" TOKEN_ENV " is too long"); return 1; }
        snprintf(token, CREDENTIALS_TOKEN_MAX, "%s", env);
        return 0;
    }
    pacer_err rc = credentials_get(url, token);
    if (rc == PACER_ERR_STATE) {
        char path[4096] = "~/.pacer/credentials.json";
        credentials_path(path, sizeof path);
        cli_error("%s can be read by other users, so it is not used: log in again (pacer bench login)", path);
    } else if (rc) {
        cli_error("not logged in to %s: pacer bench login --upload-url %s (or set $" TOKEN_ENV ")", url, url);
    }
    return rc ? 1 : 0;
}

static void print_summary(const char *url, const json_t *r) {
    const json_t *m = json_object_get(r, "model"), *hw = json_object_get(r, "hardware"), *s = json_object_get(r, "suite");
    printf("about to publish to %s:\n", url);
    printf("  model     %s @ %s (%s run, %s%s)\n", json_get_str(m, "id", "?"), json_get_str(m, "revision", "unknown"),
           json_get_str(r, "mode", "?"), json_get_str(s, "id", "?"), json_get_bool(s, "standard", false) ? "" : ", nonstandard");
    printf("  backend   %s on %s\n", json_get_str(json_object_get(r, "backend"), "name", "unknown"),
           json_get_str(json_object_get(r, "platform"), "name", "unknown"));
    json_t *gpu = json_array_get(json_object_get(hw, "gpus"), 0);
    printf("  hardware  %s; GPU %s x%lld; CPU %s\n", json_get_str(hw, "source", "unknown"), json_get_str(gpu, "name", "none"),
           (long long)json_get_int(hw, "gpu_count", 0), json_get_str(json_object_get(hw, "cpu"), "model", "unknown"));
    buf b;
    buf_init(&b, 1u << 20);
    if (inspect_render_table(r, &b) == PACER_OK && b.data) fputs(b.data, stdout);
    buf_free(&b);
    printf("  not sent: the drafts file\n");
}

/* Asks on the terminal; false without one. */
static bool ask_consent(void) {
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        cli_error("no terminal to ask for consent: pass --yes to publish");
        return false;
    }
    const char q[] = "publish this receipt? [y/N] ";
    char a[16] = "";
    bool yes = write(fd, q, sizeof q - 1) == (ssize_t)(sizeof q - 1) && read(fd, a, sizeof a - 1) > 0 &&
               (a[0] == 'y' || a[0] == 'Y');
    close(fd);
    return yes;
}

static void failed(const char *path, const char *url, const char *why) {
    cli_error("publication failed: %s", why);
    fprintf(stderr, "pacer: nothing is lost: the saved receipt %s can be uploaded through the website (%s) without "
                    "rerunning\n", path, url);
}

/* Prints the board's answer; returns 0 when the board stored the receipt. */
static int report_answer(const char *path, const char *url, int status, const json_t *ans, const char *err) {
    if ((status == 200 || status == 201) && json_is_string(json_object_get(ans, "id"))) {
        const char *state = json_get_str(ans, "state", "?"), *id = json_get_str(ans, "id", "?");
        if (json_is_true(json_object_get(ans, "duplicate"))) printf("the board already had this receipt: %s\n", id);
        const char *link = json_get_str(ans, "url", id);
        /* a board without --public-url answers with a path: it is on the URL published to */
        if (strcmp(state, "public") == 0) printf("published: %s%s\n", link[0] == '/' ? url : "", link);
        else printf("submitted as %s (%s)\n", id, state);
        size_t i;
        json_t *r;
        json_array_foreach(json_object_get(ans, "reasons"), i, r) printf("  %s\n", json_string_value(r));
        return 0;
    }
    char why[1200];
    const char *msg = json_string_value(json_get_path(ans, "error.message"));
    snprintf(why, sizeof why, "%s%s", status ? "" : "no answer: ", msg ? msg : err[0] ? err : "unexpected answer");
    failed(path, url, why);
    size_t i;
    json_t *r;
    if (json_array_size(json_object_get(ans, "reasons")) > 1)
        json_array_foreach(json_object_get(ans, "reasons"), i, r) fprintf(stderr, "  %s\n", json_string_value(r));
    return 1;
}

/* Consent, token, upload, answer: the steps after every refusal has passed. */
static int publish_send(const char *path, const char *url, const json_t *r, bool yes) {
    json_t *notes = json_array();
    publish_notes(r, notes);
    size_t i;
    json_t *n;
    print_summary(url, r);
    json_array_foreach(notes, i, n) printf("note: %s\n", json_string_value(n));
    json_decref(notes);
    fflush(stdout);
    if (!yes && !ask_consent()) {
        fprintf(stderr, "pacer: not published\n");
        return 1;
    }
    char token[CREDENTIALS_TOKEN_MAX], err[512] = "";
    if (board_token(url, token)) return 1;
    int status = 0;
    json_t *ans = NULL;
    pacer_err rc = publish_upload(url, token, r, &status, &ans, err, sizeof err);
    memset(token, 0, sizeof token);
    int out = rc ? (failed(path, url, err), 1) : report_answer(path, url, status, ans, err);
    json_decref(ans);
    return out;
}

/* ---- pacer bench publish RECEIPT ---- */

int bench_publish(int argc, char **argv) {
    static const struct option opts[] = {{"yes", no_argument, 0, 'y'}, {"upload-url", required_argument, 0, 'u'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool yes = false;
    const char *given = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'y') yes = true;
        else if (c == 'u') given = optarg;
        else if (c == 'h') { fputs(publish_usage, stdout); return 0; }
        else { fputs(publish_usage, stderr); return 1; }
    }
    if (optind + 1 != argc) { fputs(publish_usage, stderr); return 1; }
    const char *path = argv[optind];
    json_t *r = NULL, *caps = NULL;
    char err[512], url[PUBLISH_URL_MAX];
    int status = 1;
    if (receipt_read(path, &r, err, sizeof err)) { cli_error("%s: %s", path, err); goto out; }
    if (receipt_validate(r, err, sizeof err)) { cli_error("%s: not publishable: %s", path, err); goto out; }
    /* refusals that need no board come first: nothing is asked of the network for them */
    if (publish_check_receipt(r, NULL, err, sizeof err)) { cli_error("%s: %s", path, err); goto out; }
    if (board_url(given, url)) goto out;
    if (publish_get_caps(url, &caps, err, sizeof err)) { failed(path, url, err); goto out; }
    if (publish_check_receipt(r, caps, err, sizeof err)) { cli_error("%s: %s", path, err); goto out; }
    status = publish_send(path, url, r, yes);
out:
    json_decref(r);
    json_decref(caps);
    return status;
}

/* ---- bench --publish ---- */

int cli_publish_before_run(cli_publish *p, const char *upload_url, const suite *s, const char *backend,
                           const char *model_spec, bool managed, bool yes) {
    memset(p, 0, sizeof *p);
    p->yes = yes;
    char err[512], token[CREDENTIALS_TOKEN_MAX];
    struct stat st;
    /* a managed run of a path is a local model: unpublishable, whatever it measures */
    if (managed && (!model_spec || stat(model_spec, &st) == 0)) {
        cli_error("--publish: a local model cannot be published: benchmark a public checkpoint by its repo id "
                  "(pacer pull ORG/NAME first)");
        return 1;
    }
    if (board_url(upload_url, p->url)) return 1;
    if (publish_get_caps(p->url, &p->caps, err, sizeof err)) { cli_error("--publish: %s", err); return 1; }
    bool suite_ok = s->builtin && publish_caps_suite(p->caps, s->id, s->digest);
    if (suite_ok && s->rule_version >= 2 && !publish_caps_separate(p->caps)) {
        cli_error("--publish: this board does not rank v1 and v2 apart, so it cannot take %s receipts", s->id);
        return 1;
    }
    if (!suite_ok) { cli_error("--publish: the board does not take %s receipts", s->id); return 1; }
    if (backend && strcmp(backend, "auto") != 0 && !publish_caps_backend(p->caps, backend)) {
        cli_error("--publish: the board does not take %s receipts", backend);
        return 1;
    }
    int rc = board_token(p->url, token);
    memset(token, 0, sizeof token);
    return rc;
}

int cli_publish_after_run(cli_publish *p, const char *path, const json_t *receipt) {
    char err[512];
    if (publish_check_receipt(receipt, p->caps, err, sizeof err)) {
        failed(path, p->url, err);
        return 1;
    }
    return publish_send(path, p->url, receipt, p->yes);
}

void cli_publish_free(cli_publish *p) {
    json_decref(p->caps);
    p->caps = NULL;
}

/* ---- login and logout ---- */

/* One line from fd into out (no newline, no surrounding blanks). */
static bool read_token_line(int fd, char *out, size_t n) {
    size_t len = 0;
    char ch;
    while (len + 1 < n && read(fd, &ch, 1) == 1 && ch != '\n') out[len++] = ch;
    out[len] = '\0';
    while (len && (out[len - 1] == '\r' || out[len - 1] == ' ' || out[len - 1] == '\t')) out[--len] = '\0';
    size_t lead = strspn(out, " \t");
    memmove(out, out + lead, len - lead + 1);
    return out[0] != '\0';
}

/* Reads the token at a prompt on the terminal with echo off. */
static bool prompt_hidden(const char *url, char *out, size_t n) {
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0) { cli_error("no terminal for the token prompt: use --token-stdin"); return false; }
    struct termios old, quiet;
    bool restore = tcgetattr(fd, &old) == 0;
    if (restore) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)ECHO;
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    dprintf(fd, "upload token for %s: ", url);
    bool ok = read_token_line(fd, out, n);
    if (restore) tcsetattr(fd, TCSAFLUSH, &old);
    dprintf(fd, "\n");
    close(fd);
    return ok;
}

int bench_login(int argc, char **argv) {
    static const struct option opts[] = {{"token-stdin", no_argument, 0, 's'}, {"upload-url", required_argument, 0, 'u'},
                                         {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool from_stdin = false;
    const char *given = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 's') from_stdin = true;
        else if (c == 'u') given = optarg;
        else if (c == 'h') { fputs(publish_usage, stdout); return 0; }
        else { fputs(publish_usage, stderr); return 1; }
    }
    if (optind != argc) { fputs(publish_usage, stderr); return 1; }
    char url[PUBLISH_URL_MAX], token[CREDENTIALS_TOKEN_MAX], err[512] = "";
    if (board_url(given, url)) return 1;
    bool got = from_stdin ? read_token_line(STDIN_FILENO, token, sizeof token) : prompt_hidden(url, token, sizeof token);
    if (!got) { cli_error("no token read"); return 1; }
    int status = 0, out = 1;
    json_t *ans = NULL;
    pacer_err rc = publish_whoami(url, token, &status, &ans, err, sizeof err);
    if (rc) cli_error("cannot reach %s: %s; nothing stored", url, err);
    else if (status == 401) cli_error("%s does not accept this token; nothing stored", url);
    else if (status != 200) cli_error("%s answered HTTP %d%s%s; nothing stored", url, status, err[0] ? ": " : "", err);
    else if ((rc = credentials_put(url, token))) cli_error("cannot store the token: %s", pacer_strerror(rc));
    else {
        char path[4096] = "";
        credentials_path(path, sizeof path);
        printf("logged in to %s as %s (profile %s); token stored in %s\n", url, json_get_str(ans, "display_name", "?"),
               json_get_str(ans, "profile", "?"), path);
        out = 0;
    }
    memset(token, 0, sizeof token);
    json_decref(ans);
    return out;
}

int bench_logout(int argc, char **argv) {
    static const struct option opts[] = {{"upload-url", required_argument, 0, 'u'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *given = NULL;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'u') given = optarg;
        else if (c == 'h') { fputs(publish_usage, stdout); return 0; }
        else { fputs(publish_usage, stderr); return 1; }
    }
    if (optind != argc) { fputs(publish_usage, stderr); return 1; }
    char url[PUBLISH_URL_MAX], err[256];
    if (given && publish_url_check(given, url, err, sizeof err)) { cli_error("%s", err); return 1; }
    bool removed = false;
    pacer_err rc = credentials_remove(given ? url : NULL, &removed);
    if (rc) { cli_error("cannot remove the stored token: %s", pacer_strerror(rc)); return 1; }
    printf(removed ? "logged out%s%s\n" : "no stored token%s%s\n", given ? " of " : "", given ? url : "");
    return 0;
}
