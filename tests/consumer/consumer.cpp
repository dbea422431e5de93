// A C++ program built against the installed attnrank (pkg-config only).
// tests/consumer/run.sh defines AR_CONSUMER_WRAP_EXTERN_C while some public
// header still lacks extern "C" guards; once all have them the include is
// plain (nesting extern "C" is harmless either way).
#ifdef AR_CONSUMER_WRAP_EXTERN_C
extern "C" {
#include <attnrank/attnrank.h>
}
#endif
#include <iostream>
#include <string>

#include "consumer_checks.h"

int main()
{
    int failed = consumer_run();
    const std::string version = ar_version();
    std::cout << "C++ consumer (attnrank " << version << "): " << failed << " failed\n";
    return failed != 0;
}
