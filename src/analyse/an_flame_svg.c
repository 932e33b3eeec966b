/* an_flame_svg.c - `heapscope flamegraph`: write the merged frame tree
 * (an_flame.c) as a standalone interactive SVG.
 *
 * Each frame is a <g class="f"> holding a <title> (frame, module, figure,
 * share: shown on hover), a <rect> whose width is proportional to the
 * chosen cost, and a <text> label cut to fit.  A small script embedded in
 * the file zooms on click, highlights a search (regular expression) and
 * resets the zoom; without script the picture still shows, with titles. */
#include "analyse/an_flame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/an_units.h"

#define FRAME_H 16
#define PAD 10
#define TOP 54   /* title, controls */
#define BOTTOM 30 /* details line */

typedef struct svg_opts {
    an_flame_cost_t cost;
    int reverse;
    const char *title;
    unsigned width;
} svg_opts_t;

static const char *const class_names[] = {"program", "libc", "libstdc++", "other"};

/* Write s to out escaped for XML text and attributes; bytes that are
 * control characters or not ASCII become '?', so any name is valid XML. */
static void xml_str(FILE *out, const char *s, size_t max)
{
    for (size_t i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: fputc(c < 0x20 || c >= 0x7f ? '?' : c, out); break;
        }
    }
}

/* A colour for a frame: the hue range is the module class's, the position
 * inside it a hash of the name, so the same function always has the same
 * colour. */
static void colour(const char *name, int cls, int *r, int *g, int *b)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    int v = (int)(h % 1000), w = (int)((h / 1000) % 1000);
    switch (cls) {
    case AN_FLAME_PROGRAM: /* warm: red to orange */
        *r = 205 + v * 50 / 1000; *g = 80 + w * 110 / 1000; *b = 40 + v * 30 / 1000; break;
    case AN_FLAME_LIBC: /* blue */
        *r = 80 + v * 50 / 1000; *g = 130 + w * 60 / 1000; *b = 200 + v * 55 / 1000; break;
    case AN_FLAME_LIBSTDCXX: /* green */
        *r = 70 + v * 60 / 1000; *g = 170 + w * 60 / 1000; *b = 70 + v * 50 / 1000; break;
    default: /* grey-violet */
        *r = 150 + v * 50 / 1000; *g = 140 + w * 40 / 1000; *b = 170 + v * 50 / 1000; break;
    }
}

/* The figure of a cost in words: "1,234 bytes (1.2 KiB)" or "56 allocations". */
static void figure(an_flame_cost_t c, uint64_t v, char *buf, size_t n)
{
    char a[AN_UNITS_BUF], b[AN_UNITS_BUF];
    if (c == AN_FLAME_ALLOCATIONS || c == AN_FLAME_TEMPORARY)
        snprintf(buf, n, "%s",
                 an_units_noun(v, c == AN_FLAME_ALLOCATIONS ? "allocation" : "temporary allocation", a));
    else
        snprintf(buf, n, "%s bytes (%s)%s", an_units_count(v, a), an_units_bytes(v, b),
                 c == AN_FLAME_LEAKED ? " leaked" : c == AN_FLAME_PEAK ? " at peak" : "");
}

static const char svg_script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "(function(){\n"
    "var svg=document.documentElement,W=+svg.getAttribute('width'),P=" "10" ";\n"
    "var fs=[].slice.call(document.querySelectorAll('g.f')),det=document.getElementById('details');\n"
    "var mt=document.getElementById('matched'),zoomed=false;\n"
    "fs.forEach(function(g){var r=g.querySelector('rect');g._x=+r.getAttribute('x');"
    "g._w=+r.getAttribute('width');g._y=+r.getAttribute('y');g._f=r.getAttribute('fill');\n"
    " g.addEventListener('mouseover',function(){det.textContent=g.querySelector('title').textContent;});\n"
    " g.addEventListener('mouseout',function(){det.textContent=' ';});\n"
    " g.addEventListener('click',function(e){zoom(g);e.stopPropagation();});});\n"
    "function fit(g,w){var t=g.querySelector('text'),n=g.getAttribute('data-n'),k=Math.floor((w-6)/7);\n"
    " t.textContent=k<3?'':(n.length<=k?n:n.slice(0,k-2)+'..');}\n"
    "function place(g,x,w){var r=g.querySelector('rect');r.setAttribute('x',x.toFixed(2));"
    "r.setAttribute('width',w.toFixed(2));g.querySelector('text').setAttribute('x',(x+3).toFixed(2));fit(g,w);}\n"
    "var rev=svg.getAttribute('data-reverse')==='1';\n"
    "function inner(a,b){return rev?a._y>b._y:a._y<b._y;}\n"
    "function zoom(z){zoomed=true;var x0=z._x,w0=z._w,s=(W-2*P)/w0;\n"
    " fs.forEach(function(g){var inside=g._x>=x0-1e-6&&g._x+g._w<=x0+w0+1e-6;\n"
    "  if(g===z||(inside&&inner(g,z))){g.style.display='';g.style.opacity='';place(g,P+(g._x-x0)*s,g._w*s);}\n"
    "  else if(!inner(g,z)&&g._x<=x0+1e-6&&g._x+g._w>=x0+w0-1e-6){g.style.display='';g.style.opacity='0.5';place(g,P,W-2*P);}\n"
    "  else g.style.display='none';});\n"
    " document.getElementById('reset').style.display='';}\n"
    "function reset(){zoomed=false;fs.forEach(function(g){g.style.display='';g.style.opacity='';place(g,g._x,g._w);});\n"
    " document.getElementById('reset').style.display='none';}\n"
    "function search(){var q=prompt('Search frames (regular expression)','');if(q===null)return;\n"
    " var re;try{re=new RegExp(q);}catch(e){alert('bad expression: '+e.message);return;}\n"
    " var iv=[];fs.forEach(function(g){var m=q!==''&&re.test(g.getAttribute('data-n'));\n"
    "  g.querySelector('rect').setAttribute('fill',m?'rgb(230,0,230)':g._f);if(m)iv.push([g._x,g._x+g._w]);});\n"
    " iv.sort(function(a,b){return a[0]-b[0];});var tot=0,end=-1;\n"
    " iv.forEach(function(v){if(v[0]>=end){tot+=v[1]-v[0];end=v[1];}else if(v[1]>end){tot+=v[1]-end;end=v[1];}});\n"
    " mt.textContent=q===''?' ':'Matched: '+(100*tot/(W-2*P)).toFixed(2)+'%';}\n"
    "document.getElementById('reset').addEventListener('click',reset);\n"
    "document.getElementById('search').addEventListener('click',search);\n"
    "window.addEventListener('keydown',function(e){if((e.ctrlKey&&e.key==='f')||e.key==='/'){e.preventDefault();search();}\n"
    " else if(e.key==='Escape')reset();});\n"
    "fs.forEach(function(g){fit(g,g._w);});\n"
    "svg.setAttribute('data-status','ok');\n"
    "})();\n"
    "]]></script>\n";

/* Write the tree f as an SVG to out.  Frames narrower than 0.1 px are
 * left out (with their subtrees).  Returns 0 or PF_ENOMEM. */
static int write_svg(FILE *out, const an_flame_t *f, const an_report_t *r, const svg_opts_t *o)
{
    size_t n = f->n_nodes;
    double *x = calloc(n, sizeof *x), *used = calloc(n, sizeof *used);
    if (!x || !used) {
        free(x);
        free(used);
        return PF_ENOMEM;
    }
    uint64_t total = f->nodes[0].cost[o->cost];
    double span = (double)o->width - 2 * PAD;
    double scale = total ? span / (double)total : 0;
    uint32_t maxd = 0;
    for (size_t i = 0; i < n; i++)
        if (f->nodes[i].cost[o->cost] && f->nodes[i].depth > maxd &&
            (double)f->nodes[i].cost[o->cost] * scale >= 0.1)
            maxd = f->nodes[i].depth;
    unsigned height = TOP + (maxd + 1) * FRAME_H + BOTTOM;
    char t1[64], t2[64];
    fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                 "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
                 "xmlns=\"http://www.w3.org/2000/svg\" data-cost=\"%s\" data-reverse=\"%d\" "
                 "data-total=\"%llu\">\n",
            o->width, height, o->width, height, an_flame_cost_name(o->cost), o->reverse,
            (unsigned long long)total);
    fputs("<style>text{font:12px monospace;fill:#000}g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}"
          ".ctl{fill:#036;cursor:pointer;text-decoration:underline}</style>\n"
          "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" fill=\"#f8f8f4\"/>\n", out);
    fprintf(out, "<text x=\"%u\" y=\"22\" text-anchor=\"middle\" style=\"font-size:16px\">", o->width / 2);
    xml_str(out, o->title, 500);
    fprintf(out, "</text>\n<text x=\"%u\" y=\"40\" text-anchor=\"middle\">", o->width / 2);
    figure(o->cost, total, t1, sizeof t1);
    char ns[AN_UNITS_BUF];
    fprintf(out, "%s%s in %s, ", o->reverse ? "icicle from the allocation sites; " : "",
            t1, an_units_noun(r->model.n_stats, "stack", ns));
    xml_str(out, r->prof->info.exe ? r->prof->info.exe : "?", 300);
    fputs("</text>\n", out);
    fprintf(out, "<text id=\"reset\" class=\"ctl\" x=\"%d\" y=\"40\" style=\"display:none\">Reset zoom</text>\n"
                 "<text id=\"search\" class=\"ctl\" x=\"%u\" y=\"40\" text-anchor=\"end\">Search</text>\n"
                 "<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"> </text>\n"
                 "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n",
            PAD, o->width - PAD, o->width - PAD, height - 10, PAD, height - 10);
    for (size_t i = 0; i < n; i++) {
        const an_flame_node_t *nd = &f->nodes[i];
        uint64_t v = nd->cost[o->cost];
        double w = (double)v * scale;
        if (i) {
            x[i] = x[nd->parent] + used[nd->parent];
            used[nd->parent] += w;
        } else
            x[i] = PAD;
        /* a pruned parent prunes its children: their x is never placed */
        if (!v || w < 0.1 || (i && f->nodes[nd->parent].cost[o->cost] * scale < 0.1))
            continue;
        unsigned y = o->reverse ? TOP + nd->depth * FRAME_H
                                : TOP + (maxd - nd->depth) * FRAME_H;
        const char *name = f->names[nd->name];
        int cr, cg, cb;
        colour(name, i ? nd->cls : AN_FLAME_OTHER, &cr, &cg, &cb);
        figure(o->cost, v, t1, sizeof t1);
        double share = total ? 100.0 * (double)v / (double)total : 0;
        fputs("<g class=\"f\" data-n=\"", out);
        xml_str(out, name, 4096);
        fprintf(out, "\" data-v=\"%llu\"><title>", (unsigned long long)v);
        xml_str(out, name, 4096);
        fprintf(out, " [%s]: %s, %.2f%%</title><rect x=\"%.4f\" y=\"%u\" width=\"%.4f\" height=\"%d\" "
                     "rx=\"2\" fill=\"rgb(%d,%d,%d)\"/><text x=\"%.2f\" y=\"%u\"></text></g>\n",
                i ? class_names[nd->cls] : "total", t1, share, x[i], y, w, FRAME_H - 1, cr, cg, cb,
                x[i] + 3, y + 12);
        (void)t2;
    }
    fputs(svg_script, out);
    fputs("</svg>\n", out);
    free(x);
    free(used);
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: heapscope flamegraph [--cost allocations|bytes|leaked|peak|temporary]\n"
            "                            [--reverse] [--title TEXT] [--width PX] -o OUT.svg FILE\n"
            "Write an interactive SVG flamegraph of the profile FILE: frame widths are the\n"
            "chosen cost (default bytes) of the stacks through each function; hover for\n"
            "figures, click to zoom, Search (or Ctrl-F, /) highlights, Reset zoom (Esc).\n"
            "--reverse draws an icicle rooted at the allocation sites.\n");
}

static int bad(const char *msg)
{
    fprintf(stderr, "heapscope flamegraph: %s\n", msg);
    usage(stderr);
    return 2;
}

int an_flame_main(int argc, char **argv)
{
    svg_opts_t o = {AN_FLAME_BYTES, 0, NULL, 1200};
    const char *path = NULL, *outpath = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--reverse")) {
            o.reverse = 1;
        } else if (!strcmp(a, "--cost")) {
            if (an_flame_cost_parse(next, &o.cost))
                return bad("--cost needs one of allocations, bytes, leaked, peak, temporary");
            i++;
        } else if (!strcmp(a, "--title")) {
            if (!next)
                return bad("--title needs a text");
            o.title = argv[++i];
        } else if (!strcmp(a, "--width")) {
            char *end;
            errno = 0;
            unsigned long w = next ? strtoul(next, &end, 10) : 0;
            if (!next || *end || errno || w < 100 || w > 100000)
                return bad("--width needs a number of pixels from 100 to 100000");
            o.width = (unsigned)w;
            i++;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (!next)
                return bad("-o needs a file name");
            outpath = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "heapscope flamegraph: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (path) {
            return bad("give one profile");
        } else
            path = a;
    }
    if (!path)
        return bad("no profile given");
    if (!outpath)
        return bad("no output given (-o OUT.svg)");
    an_report_t r;
    char err[PF_ERRMSG_SIZE];
    if (an_report_load(&r, path, err, sizeof err)) {
        fprintf(stderr, "heapscope flamegraph: %s: %s\n", path, err);
        an_report_close(&r);
        return 1;
    }
    char title[96];
    if (!o.title) {
        snprintf(title, sizeof title, "Heap flamegraph: %s%s", an_flame_cost_name(o.cost),
                 o.reverse ? " (reversed)" : "");
        o.title = title;
    }
    an_flame_t f;
    int rc = an_flame_build(&f, &r, o.reverse);
    FILE *out = NULL;
    if (!rc) {
        out = fopen(outpath, "w");
        if (!out) {
            fprintf(stderr, "heapscope flamegraph: cannot write %s: %s\n", outpath, strerror(errno));
            an_flame_free(&f);
            an_report_close(&r);
            return 1;
        }
        rc = write_svg(out, &f, &r, &o);
    }
    if (out && (fclose(out) || rc)) {
        fprintf(stderr, "heapscope flamegraph: cannot write %s\n", outpath);
        rc = 1;
    } else if (rc)
        fprintf(stderr, "heapscope flamegraph: out of memory\n");
    an_flame_free(&f);
    an_report_close(&r);
    return rc ? 1 : 0;
}
