/* an_warnings.h - the warnings every report shows for a profile
 * (truncation, not final, collector diagnostics and MESSAGE records). */
#ifndef AN_WARNINGS_H
#define AN_WARNINGS_H

#include "analyse/an_model.h"

/* Append the profile's warnings to m->warnings, in a fixed order.
 * Returns 0 or PF_ENOMEM. */
int an_warnings_add(an_model_t *m);

#endif
