/* version.h - pacer's one version string: the client version in receipts, the engine's in
 * its manifest, `pacer --version`. */
#ifndef PACER_VERSION_H
#define PACER_VERSION_H

#define PACER_VERSION "0.1.0"

#endif
