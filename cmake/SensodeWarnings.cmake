# One place for the warning flags every Sensode target uses.
add_library(sensode_warnings INTERFACE)
target_compile_options(sensode_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough
  -Wno-restrict  # GCC 12 false positives inside std::string (GCC bug 105329)
  $<$<BOOL:${SENSODE_WERROR}>:-Werror>)
