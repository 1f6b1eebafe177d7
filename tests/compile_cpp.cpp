// The library compiles as C++ and its API is usable from C++.
#define SWA_IMPLEMENTATION
#include "swa.h"
#include <cstdio>
#include <cstring>

int main()
{
    swa_error err;
    swa_model *m = nullptr;
    swa_status s = swa_model_load("/nonexistent.gguf", &m, &err);
    if (s != SWA_ERR_IO || m != nullptr || std::strstr(err.msg, "/nonexistent.gguf") == nullptr) {
        std::printf("compile_cpp: unexpected %s: %s\n", swa_status_str(s), err.msg);
        return 1;
    }
    std::printf("compile_cpp: ok (swa.h %s as C++)\n", swa_version());
    return 0;
}
