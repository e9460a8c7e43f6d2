#!/usr/bin/env python3
"""Rewrite the 200 response examples in api/openapi.json from a running
server, after a formula change (tests/api/test_openapi.c fails until the
documented answers equal the api's), and the problem bodies of the 400
examples, which carry the request that produces them in x-request (a JSON
value) or x-request-text (raw body text, e.g. a duplicated key).  Usage:
    build/gcc/server/trainsize-server --port 18080 &
    scripts/refresh-openapi-examples.py http://127.0.0.1:18080
"""
import json
import sys
import urllib.error
import urllib.request

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
path = "api/openapi.json"
spec = json.load(open(path))
for route, item in spec["paths"].items():
    op = item.get("post")
    if not op:
        continue
    reqs = op["requestBody"]["content"]["application/json"]["examples"]
    answers = op["responses"]["200"]["content"]["application/json"]["examples"]
    for name, ex in reqs.items():
        if name not in answers:
            continue
        body = json.dumps(ex["value"]).encode()
        req = urllib.request.Request(url + route, data=body,
                                     headers={"Content-Type": "application/json"})
        answers[name]["value"] = json.load(urllib.request.urlopen(req))
    problems = op["responses"]["400"]["content"]["application/problem+json"]
    for name, ex in problems.get("examples", {}).items():
        if "x-request" in ex:
            body = json.dumps(ex["x-request"]).encode()
        elif "x-request-text" in ex:
            body = ex["x-request-text"].encode()
        else:
            continue
        req = urllib.request.Request(url + route, data=body,
                                     headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(req)
            sys.exit(f"{route} {name}: documented as a 400, answered 200")
        except urllib.error.HTTPError as e:
            ex["value"] = json.load(e)
with open(path, "w") as f:
    json.dump(spec, f, indent=2, ensure_ascii=False)
    f.write("\n")
