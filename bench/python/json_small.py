# json_small.py - a short CPython workload for bench/overhead: 20,000
# dicts to JSON and back, a regex over the text.  Under
# PYTHONMALLOC=malloc (every object from malloc) about 985k allocations
# from 12.7k stacks, most of them 30-60 frames deep, through frames
# built without frame pointers.  See bench/python/README.md.
import json, re, collections
d = [{'k': i, 'v': str(i) * 3, 'l': list(range(i % 7))} for i in range(20000)]
s = json.dumps(d); print(len(json.loads(s)), len(re.findall(r'[0-9]+', s)))
print(collections.Counter(len(x['l']) for x in d).most_common(2))
