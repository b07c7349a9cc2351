/* Test fixture: a shared library that is not a complete OAAX runtime (it
 * exports only two of the nine functions), for oaax-run's missing-symbol
 * error. */
#define EXPORT __attribute__((visibility("default")))
EXPORT const char* runtime_name(void) { return "incomplete"; }
EXPORT const char* runtime_version(void) { return "0"; }
