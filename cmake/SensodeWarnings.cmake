# One place for the warning flags every Sensode target uses.
add_library(sensode_warnings INTERFACE)
target_compile_options(sensode_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wimplicit-fallthrough
  $<$<BOOL:${SENSODE_WERROR}>:-Werror>)
