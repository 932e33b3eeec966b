// hs_cxx.cpp - C++ new/delete, new[]/delete[] and std::vector growth.
//
// hsprog::make_nodes:   10 x new Node (40 bytes)         10 allocs, 400 bytes,
//                       all deleted by delete_nodes
// hsprog::make_arrays:  new Tracked[10] (16-byte objects with a destructor:
//                       8-byte array cookie, 168 bytes) and new int[25]
//                       (100 bytes); both delete[]'d: 2 allocs, 268 bytes
// hsprog::grow_vector:  std::vector<int> with 100 push_backs: capacity
//                       1, 2, 4, ... 128: 8 allocs, 4 * 255 = 1020 bytes,
//                       8 frees (7 on growth, 1 at destruction)
// hsprog::leak_node:    1 x new Node, never deleted: 40 bytes leaked
// heapscope interposes operator new, so the named function is frame 0.
// libstdc++ allocates its 72704-byte emergency pool before main: that stack
// is not asserted.  Output uses write(2): no iostream.
#include <cstdlib>
#include <vector>

#include <unistd.h>

#define HS_SITE __attribute__((noinline, noclone))

// Keep the compiler from eliding a new/delete pair (allowed since C++14).
static inline void hs_escape(const void *p)
{
    __asm__ __volatile__("" : : "r"(p) : "memory");
}

namespace hsprog {

struct Node {
    Node *next;
    long payload[4];
};
static_assert(sizeof(Node) == 40, "Node is 40 bytes");

struct Tracked {
    long a, b;
    ~Tracked() { a = b = 0; }
};
static_assert(sizeof(Tracked) == 16, "Tracked is 16 bytes");

static Node *volatile leaked;

HS_SITE Node *make_nodes(int n)
{
    Node *head = nullptr;
    for (int i = 0; i < n; i++) {
        Node *x = new Node;
        hs_escape(x);
        x->next = head;
        x->payload[0] = i;
        head = x;
    }
    return head;
}

HS_SITE void delete_nodes(Node *head)
{
    while (head) {
        Node *next = head->next;
        delete head;
        head = next;
    }
}

HS_SITE long make_arrays()
{
    Tracked *t = new Tracked[10];
    int *v = new int[25];
    hs_escape(t);
    hs_escape(v);
    t[9].a = 1;
    v[24] = 2;
    long sum = t[9].a + v[24];
    delete[] t;
    delete[] v;
    return sum;
}

HS_SITE long grow_vector(int n)
{
    std::vector<int> v;
    for (int i = 0; i < n; i++)
        v.push_back(i);
    hs_escape(v.data());
    return (long)v.size();
}

HS_SITE void leak_node()
{
    leaked = new Node;
}

} // namespace hsprog

int main()
{
    hsprog::delete_nodes(hsprog::make_nodes(10));
    long r = hsprog::make_arrays() + hsprog::grow_vector(100);
    hsprog::leak_node();
    if (r != 103)
        return 99;
    static const char msg[] = "cxx done\n";
    if (write(1, msg, sizeof msg - 1) < 0)
        return 98;
    return 0;
}
