// rp_clean.cpp - a C++ program without leaks that still makes the C++
// runtime allocate: iostream output and one exception thrown and caught.
// With the default suppressions `heapscope report --leaks` shows nothing.
// Also two instantiations of a template that allocates (freed), for
// --fold-templates:
//   hsrp::tmpl_site<int>:  new int[10]   (40 bytes), deleted
//   hsrp::tmpl_site<long>: new long[10]  (80 bytes), deleted
#include <iostream>
#include <stdexcept>

namespace hsrp {

template <typename T> __attribute__((noinline)) void tmpl_site()
{
    T *p = new T[10];
    __asm__ __volatile__("" : : "r"(p) : "memory");
    delete[] p;
}

} // namespace hsrp

int main()
{
    try {
        throw std::runtime_error("expected");
    } catch (const std::exception &e) {
        std::cout << "caught " << e.what() << std::endl;
    }
    hsrp::tmpl_site<int>();
    hsrp::tmpl_site<long>();
    return 0;
}
