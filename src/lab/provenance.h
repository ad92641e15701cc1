/* provenance.h - what a lab run records about where it ran: the probed hardware (already
 * redacted by the probes: no serials, identifiers, host or user names), the detail line
 * of DESIGN.md 11 (kernel, memory, CPU threads, the model's volume and its uncached read
 * sample), and the command line with the paths of this machine replaced by placeholders
 * (<model>, <binary>, <root>, <suite>, <results>). Pure: JSON in, JSON out. */
#ifndef PACER_LAB_PROVENANCE_H
#define PACER_LAB_PROVENANCE_H

#include <jansson.h>

/* One option whose value is a path, and the placeholder written instead. */
typedef struct lab_placeholder {
    const char *flag;        /* "--binary" (also matched as "--binary=VALUE") */
    const char *placeholder; /* "<binary>" */
} lab_placeholder;

/* The command line as a JSON array: argv[0] as "pacer", the next `keep` arguments as they
 * are (the subcommand's words), the value of every flag in `flags`
 * (terminated by a NULL flag) replaced by its placeholder, and every other argument that
 * does not start with '-' (and is not the value of an option listed in `valued`, a
 * NULL-terminated list of the options that take a value) written as `positional`. */
json_t *lab_provenance_command(int argc, char *const *argv, int keep, const lab_placeholder *flags,
                               const char *const *valued, const char *positional);
/* The hardware detail object from a probe_collect() object (new reference). */
json_t *lab_provenance_detail(const json_t *hardware);

#endif
