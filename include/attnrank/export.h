/* Symbol visibility: the shared library exports only what is marked AR_API. */
#ifndef ATTNRANK_EXPORT_H
#define ATTNRANK_EXPORT_H

#if defined(AR_BUILDING_LIBRARY) && defined(__GNUC__)
#define AR_API __attribute__((visibility("default")))
#else
#define AR_API
#endif

#endif
