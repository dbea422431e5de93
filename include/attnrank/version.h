#ifndef ATTNRANK_VERSION_H
#define ATTNRANK_VERSION_H
#include "export.h"
/* Version of the library this program runs against ("0.1.0"). */
AR_API const char *ar_version(void);
#endif
