// The one translation unit that compiles toml++ (the build sets TOML_HEADER_ONLY=0 everywhere).
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
