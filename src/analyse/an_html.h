/* an_html.h - `heapscope html`: one self-contained, offline HTML report
 * (summary, heap/RSS timeline with range selection, flamegraph with a cost
 * selector, sortable paged tables of stacks, leaks and temporaries, size
 * histogram).  The profile goes in as compact JSON (a string table of
 * functions, stacks as arrays of frame indexes); the page's script and
 * style (src/analyse/html/) are embedded at build time by cmake/embed.cmake. */
#ifndef AN_HTML_H
#define AN_HTML_H

/* `heapscope html [--title T] -o OUT.html FILE`; argv[0] is "html".
 * Returns 0 written, 1 the profile cannot be read or OUT cannot be
 * written, 2 bad usage (message on stderr). */
int an_html_main(int argc, char **argv);

#endif
