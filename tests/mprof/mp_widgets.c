/* mp_widgets.c - the producer/consumer example of Zorn and Hilfinger's
 * mprof paper, as a real C program for `heapscope report --mprof`.
 *
 * main makes 10,000 widgets of 204 bytes (an enum plus int[50]),
 * alternating red and blue: even i -> make_red_widget, odd i ->
 * make_blue_widget; both call make_widget, the only caller of malloc.
 * The consumer (consume_widget, which makes no allocation) frees the blue
 * ones and drops the red ones, so exactly:
 *   10,000 allocations, 2,040,000 bytes, 5,000 frees,
 *   1,020,000 bytes kept (5,000 red widgets) on main > make_red_widget >
 *   make_widget.
 * Nothing else allocates (output through write(2), see hsprog.h). */
#include <stdlib.h>

#include "hsprog.h"

enum color { RED, BLUE };

typedef struct widget {
    enum color color;
    int data[50];
} widget_t;

_Static_assert(sizeof(widget_t) == 204, "the paper's widget is 204 bytes");

HS_SITE static widget_t *make_widget(enum color c)
{
    widget_t *w = malloc(sizeof *w);
    if (!w)
        abort();
    w->color = c;
    hs_escape(w);
    return w;
}

/* hs_escape after the call keeps it from being a tail call, which would
 * drop these two functions from the stacks. */
HS_SITE static widget_t *make_red_widget(void)
{
    widget_t *w = make_widget(RED);
    hs_escape(w);
    return w;
}

HS_SITE static widget_t *make_blue_widget(void)
{
    widget_t *w = make_widget(BLUE);
    hs_escape(w);
    return w;
}

/* The consumer frees blue widgets only: the red ones leak. */
HS_SITE static void consume_widget(widget_t *w)
{
    if (w->color == BLUE)
        free(w);
}

int main(void)
{
    for (int i = 0; i < 10000; i++) {
        widget_t *w = (i % 2 == 0) ? make_red_widget() : make_blue_widget();
        consume_widget(w);
    }
    return 0;
}
