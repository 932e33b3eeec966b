# warnings.cmake - one place for compiler warnings and sanitizer flags.
set(HEAPSCOPE_WARNINGS -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wno-unused-parameter)
if(HEAPSCOPE_WERROR)
  list(APPEND HEAPSCOPE_WARNINGS -Werror)
endif()
if(HEAPSCOPE_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
# Frame pointers everywhere we build: the fp unwinder and perf both want them.
add_compile_options(-fno-omit-frame-pointer)

# heapscope_warnings(target): apply the project's warning set to a target.
function(heapscope_warnings target)
  get_target_property(_langs ${target} LINKER_LANGUAGE)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:${HEAPSCOPE_WARNINGS}>)
endfunction()
