#!/usr/bin/env python3
"""Pipeline p2p on the critical path of Megatron's 1F1B / interleaved schedules.

A rendezvous simulation (a message moves once both its send and its receive
are posted, c seconds later; sends posted together share the sender's link)
of every rank's order of computes, posts and waits, our own rewrite of
NVIDIA/Megatron-LM megatron/schedules.py@6985e58938 (blocking: each
exchange waited at once, as in the SC21 runs) and of
megatron/core/pipeline_parallel/schedules.py@d98e8a64dd with
overlap_p2p_comm (steady-state sends waited before the next chunk that
needs them; warm-up and cool-down blocking).  Prints, per layout, the step
time the p2p adds in units of c next to core/ts_step_comm.c's count
(ts_step_pp_p2p): 2 (p - 1 + (v - 1) p) + 2 (m v - (v - 1) p) blocking,
2 (v p - 1) overlapped.  It also checks the compute-only time against the
bubble formula m t + (p - 1) t / v.  Usage: python3 scripts/pp-schedule-sim.py
"""
import sys
from collections import defaultdict

def chunk_of(k, p, v, fwd):
    c = (k % (p * v)) // p
    return c if fwd else v - 1 - c

def build(p, v, m, r, overlap):
    """Op list of rank r. 'F'/'B' compute; ('X', sends, recvs, hid); ('W', [hids])."""
    ops = []; hid = [0]
    N = m * v
    first = r == 0; last = r == p - 1
    def X(sends, recvs):
        hid[0] += 1; ops.append(('X', sends, recvs, hid[0])); return hid[0]
    def W(hs):
        hs = [h for h in hs if h is not None]
        if hs: ops.append(('W', hs))
    def blocking(sends, recvs):
        if sends or recvs: W([X(sends, recvs)])
    nxt, prv = (r + 1) % p, (r - 1) % p
    if m == p:
        warm = N; allw = True
    else:
        warm = min((p - r - 1) * 2 + (v - 1) * p, N); allw = False
    rem = N - warm
    def fsend(k):  # forward output of virtual step k goes to next rank?
        return not (last and chunk_of(k, p, v, True) == v - 1)
    def bsend(k):
        return not (first and chunk_of(k, p, v, False) == 0)
    def recv_prev_warm(k):
        if k == N - 1: return False
        if first and chunk_of(k + 1, p, v, True) == 0: return False
        return True
    def recv_prev_steady(fk, kk):
        rp = True
        if first:
            if fk - (p - 1) < 0: rp = False  # (overlap code; 2021 code: chunk of negative id)
            elif chunk_of(fk - (p - 1), p, v, True) == v - 1: rp = False
        if kk == rem - 1: rp = False
        return rp
    def recv_next_steady(bk):
        rn = True
        if last:
            if bk - (p - 1) < 0: rn = False
            elif chunk_of(bk - (p - 1), p, v, False) == 0: rn = False
        return rn
    A, G = 'act', 'grad'
    # initial recv
    if not first: blocking([], [(prv, A)])
    if not overlap:
        for k in range(warm):
            ops.append('F')
            rp = recv_prev_warm(k)
            sends = [(nxt, A)] if fsend(k) else []
            recvs = [(prv, A)] if rp else []
            if k == warm - 1 and not allw:
                if not last: recvs.append((nxt, G))
            blocking(sends, recvs)
        for kk in range(rem):
            fk = kk + warm; bk = kk
            ops.append('F'); ops.append('B')
            sends = ([(nxt, A)] if fsend(fk) else []) + ([(prv, G)] if bsend(bk) else [])
            recvs = ([(prv, A)] if recv_prev_steady(fk, kk) else []) + ([(nxt, G)] if recv_next_steady(bk) else [])
            blocking(sends, recvs)
        if allw and not last: blocking([], [(nxt, G)])
        for k in range(rem, N):
            ops.append('B')
            rn = not (last and chunk_of(k + 1, p, v, False) == v - 1) and k != N - 1
            blocking([(prv, G)] if bsend(k) else [], [(nxt, G)] if rn else [])
    else:
        # current Megatron-Core, overlap_p2p_comm, no warmup_flush
        rpw = []; rnw = []
        for k in range(warm):
            ops.append('F')
            rp = recv_prev_warm(k)
            blocking([(nxt, A)] if fsend(k) else [], [(prv, A)] if rp else [])
            if k == warm - 1 and not allw:
                if not last: rnw.append(X([], [(nxt, G)]))
        for kk in range(rem):
            fk = kk + warm; bk = kk
            ops.append('F')
            h = X([(nxt, A)] if fsend(fk) else [], [(prv, A)] if recv_prev_steady(fk, kk) else [])
            W(rnw); rnw = []
            ops.append('B')
            h2 = X([(prv, G)] if bsend(bk) else [], [(nxt, G)] if recv_next_steady(bk) else [])
            rnw.append(h2)
            # next forward waits for its recv_prev
            rpw = [h]
            if kk + 1 < rem: W(rpw)
        W(rnw)
        if allw and not last: blocking([], [(nxt, G)])
        for k in range(rem, N):
            ops.append('B')
            rn = not (last and chunk_of(k + 1, p, v, False) == v - 1) and k != N - 1
            blocking([(prv, G)] if bsend(k) else [], [(nxt, G)] if rn else [])
        W(rpw)
    return ops

def run(p, v, m, f, b, c, overlap, share=True):
    progs = [build(p, v, m, r, overlap) for r in range(p)]
    pc = [0] * p; t = [0.0] * p
    posts = defaultdict(lambda: {'s': [], 'r': []})  # key (src,dst,kind)
    hmsg = {}
    nsend_batch = {}
    while True:
        prog = False
        for r in range(p):
            while pc[r] < len(progs[r]):
                op = progs[r][pc[r]]
                if op == 'F': t[r] += f
                elif op == 'B': t[r] += b
                elif op[0] == 'X':
                    _, sends, recvs, h = op
                    lst = []
                    k = len(sends) if share else 1
                    for (d, kind) in sends:
                        key = (r, d, kind); posts[key]['s'].append((t[r], k)); lst.append((key, len(posts[key]['s']) - 1))
                    for (s, kind) in recvs:
                        key = (s, r, kind); posts[key]['r'].append(t[r]); lst.append((key, len(posts[key]['r']) - 1))
                    hmsg[(r, h)] = lst
                else:
                    ends = []
                    ok = True
                    for h in op[1]:
                        for key, i in hmsg[(r, h)]:
                            P = posts[key]
                            if i >= len(P['s']) or i >= len(P['r']): ok = False; break
                            ts, k = P['s'][i]
                            ends.append(max(ts, P['r'][i]) + c * k)
                        if not ok: break
                    if not ok: break
                    t[r] = max([t[r]] + ends)
                pc[r] += 1; prog = True
        if all(pc[r] == len(progs[r]) for r in range(p)): break
        if not prog: raise SystemExit('deadlock at %s' % pc)
    return max(t)

if __name__ == '__main__':
    for (p, v, m) in [(4, 2, 8), (4, 2, 16), (8, 2, 64), (4, 3, 12), (8, 4, 32), (4, 1, 8), (8, 1, 32)]:
        f, b = 1.0, 2.0
        ideal = run(p, v, m, f / v, b / v, 0.0, False)
        for ov in (False, True):
            if v == 1 and ov: continue
            for c in (0.001, 0.01):
                T = run(p, v, m, f / v, b / v, c, ov)
                W0 = 2 * (p - 1) + (v - 1) * p
                warm = min((v - 1) * p, m * v)
                if ov and m * v > W0: model = 2 * (p - 1 + warm)
                else: model = 2 * (p - 1 + warm) + (m * v - warm) * 2
                print(f"p{p} v{v} m{m} overlap={ov} c={c}: ideal {ideal:.3f} (bubble formula {m*(f+b)+(p-1)*(f+b)/v:.3f}) exposed/c {(T-ideal)/c:.1f}  model {model}")
