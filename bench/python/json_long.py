# json_long.py - a longer CPython workload for bench/overhead: three
# rounds of 60,000 dicts to JSON and back and a regex count over the
# text; about 9.5M allocations under PYTHONMALLOC=malloc.  See
# bench/python/README.md.
import json, re
def build(n):
    return [{'id': i, 'name': 'item%d' % i, 'tags': ['t%d' % (i % 7), 'x'], 'v': [i, i * 2.5]} for i in range(n)]
for r in range(3):
    d = build(60000)
    s = json.dumps(d)
    e = json.loads(s)
    words = re.findall(r'item\d+', s)
    c = {}
    for w in words:
        c[w[-1]] = c.get(w[-1], 0) + 1
print(len(s), len(words), sorted(c.items())[:2])
