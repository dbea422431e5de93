# The one status helper of attnrank._core, for every binding (this module or
# another extension that cimports it): AR_OK returns 0; any other status
# raises the attnrank.Error subclass of that status with the C message (the
# ar_error text when err is not NULL and was filled, else ar_strerror).
from attnrank._capi cimport ar_error

cdef int check_status(int status, str function, const ar_error *err=*,
                      object detail=*) except -1
