/*
 * polyflake's lease protocol and fork/registry rules, as the code implements them, for spin.
 *
 * `make model` (all of it) and `make test-model` (the bounded part): see verify/model/check.sh and
 * docs/reliability.md ("The lease protocol, model-checked"). Every transition names the Rust
 * function it models; each of those functions carries a comment pointing back here.
 *
 * One model, several configurations chosen with -D at compile time:
 *   STORE=0  fork and the process-wide registry of node ids (static node ids)
 *   STORE=1  file lease (core/src/lease/file.rs): flock, inode, record with a holder token
 *   STORE=2  etcd lease (core/src/lease/etcd.rs): TTL lease, slot key, mark with mod revision
 *   STORE=3  ZooKeeper lease (core/src/lease/zookeeper.rs): session, ephemeral slot, versions
 *   LIVE=1   liveness configuration (lazy clock, no faults but a store outage)
 *
 * Abstract IDs are (node, ms, seq). Time is whole ms, 1..TMAX; a holder's clock is the true
 * time plus an offset of -1, 0 or +1 (a host clock stepped back or forward within bounds:
 * forward steps beyond max_forward_step_ms are refused by core/src/forward.rs and not
 * modelled). Every fault is bounded (see BUDGET).
 *
 * Rules that are parameters (1 = the real protocol, 0 = the mutation check):
 *   R_CHECK     renewal checks the record is still ours          (all three stores)
 *   R_GUARD     restart guard: issue only after the predecessor's possible R
 *   R_BEFORE    R written durably BEFORE being published as the issuing limit
 *   R_FORKREG   a static id is held host-wide: a child cannot take an id its live parent
 *               holds
 *   R_HANDOVER  a new static holder starts after the millisecond it took the id in
 *   R_FSTAT     the fork handler / a child closes a descriptor only after fstat matches
 *   R_ROLLBACK  a live holder that finds the store's fence moved since its take stops, its
 *               renewal writing nothing (remote/protocol.rs::renew_tick, Holder::read_fence)
 *   R_TAKEFENCE a take reads the store's fence again after its first write of R and fails when
 *               it moved (remote/protocol.rs::take; file.rs::acquire, which reads the fence once
 *               before it locks a slot file: found by this model once it read the file's fence
 *               as the code does, verify/model/trails/no-file-take-fence-read.txt)
 *   R_CLAIM     ZooKeeper: every write checks this holder's own claim znode, made with the
 *               slot znode in one multi (zookeeper.rs create_slot / write_hwm; found by this
 *               model, verify/model/trails/no-claim-check.txt)
 *   R_FENCE     a restored store is used by takers only after `polyflake lease fence`
 *               (fence.rs: one floor under every slot's guard)
 *   R_CAP       the issuing limit is at most one reserve past the clock reading of the last
 *               successful ownership check (window.rs Window::start / publish; proposed by
 *               this model, whose first run found a deleted slot file guarded too short,
 *               verify/model/trails/no-cap.txt; a caller the cap refuses renews a file lease in its
 *               own thread, engine.rs renew_for: a renewal step at the clock's reading)
 */

#ifndef STORE
#define STORE 1
#endif
#ifndef LIVE
#define LIVE 0
#endif
#ifndef R_CHECK
#define R_CHECK 1
#endif
#ifndef R_GUARD
#define R_GUARD 1
#endif
#ifndef R_BEFORE
#define R_BEFORE 1
#endif
#ifndef R_FORKREG
#define R_FORKREG 1
#endif
#ifndef R_HANDOVER
#define R_HANDOVER 1
#endif
#ifndef R_FSTAT
#define R_FSTAT 1
#endif
#ifndef R_ROLLBACK
#define R_ROLLBACK 1
#endif
#ifndef R_FENCE
#define R_FENCE 1
#endif
#ifndef R_CAP
#define R_CAP 1
#endif
#ifndef FENCE_WINDOW
#define FENCE_WINDOW 0    /* 1: clients reach a restored store before its fence (see Env) */
#endif

/* Bounds. */
#ifndef TMAX
#define TMAX 4            /* the true time runs 1..TMAX */
#endif
#ifndef RES
#define RES 1             /* the reserve, ms */
#endif
#ifndef SEQ
#define SEQ 1             /* sequences per ms (2 for the registry configuration) */
#endif
#define MS (TMAX + 3)     /* ms values an ID may carry: 0..MS-1 */
#ifndef NH
#define NH 3              /* lease holders (processes) */
#endif
#define NP (NH + 1)       /* + one forked child */
#define NS 2              /* lease slots = node ids 0 and 1; a static node id is 2 */
#define NONE 255
/* Faults, each at most once per run, and at most BUDGET of them in all. */
#ifndef BUDGET
#define BUDGET 1
#endif
#ifndef CLOCKSTEP
#define CLOCKSTEP 1       /* clock steps allowed */
#endif
#ifndef DELETE_FILE
#define DELETE_FILE 1     /* slot file deleted / overwritten allowed */
#endif
#ifndef RESTORE
#define RESTORE 1         /* store restored to an older snapshot allowed */
#endif
#ifndef FORK
#define FORK 1            /* fork of holder 0 (a lease holder) allowed */
#endif
#ifndef LATE
#define LATE 1            /* a remote write that lands after its caller timed out */
#endif
#ifndef ENDS
#define ENDS 1            /* generators ended by a crash or a clean close (a restart follows) */
#endif
#ifndef DOWN
#define DOWN 1            /* the store down and back */
#endif
#ifndef MONO
#define MONO 0            /* monotonic mode (borrows ahead of the clock) instead of strict */
#endif

#define FILE 1
#define ETCD 2
#define ZK 3

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

/* ---------------------------------------------------------------------------------------- */
/* Time and clocks                                                                          */
byte now_t = 1;                 /* the true time */
byte off[NP];                   /* clock offset + 1: 0, 1 or 2 (set to 1 in init) */
#if STORE == FILE
#define CLK(p) (now_t + off[0] - 1)   /* one host: one clock for every process */
#else
#define CLK(p) (now_t + off[p] - 1)
#endif

/* ---------------------------------------------------------------------------------------- */
/* What was issued (ghost), and the properties                                              */
byte issued[3 * MS];            /* bit q of issued[node * MS + ms]: (node, ms, q) was issued */
bool held[NP];                  /* ghost: a slot taken and started (Window::start)     */
bool any[NP];                   /* the current incarnation of each process issued an ID */
byte iss_max[NS];               /* ghost: the highest ms issued on the slot (node) */
byte dead_lim[NS];              /* ghost: the highest limit of a holder of the slot that crashed */
byte hiR;                       /* ghost: the highest R ever durably written (the fence's range) */

/* ---------------------------------------------------------------------------------------- */
/* Holders (one generator per process; index NH is holder 0's forked child)                  */
byte tok[NP];                   /* token of the current incarnation (0: none running) */
byte inc[NP];                   /* incarnations so far */
byte slot[NP];                  /* slot held (NONE) = node id */
byte floor_[NP];                /* Window.floor: the restart guard G     */
byte lim[NP];                   /* Window.limit: 0 = nothing may be issued     */
byte myR[NP];                   /* Window.r_ms: R as this holder last wrote it     */
byte pred[NP];                  /* ghost: the predecessors' possible R when the slot was taken */
byte lms[NP];                   /* the state word: last ms ... */
byte lseq[NP];                  /* ... and sequence issued */
bool lost[NP];
byte chk[NP];                   /* clock at the last successful ownership check (R_CAP) */
bool pend[NP];                  /* between a renewal's check and its write (file) */
bool taking[NP];                /* a take under way: the slot is ours, its first R not yet written */

/* The store's fence (`polyflake lease fence`, fence.rs): a lease directory's `polyflake-fence`,
 * etcd's and ZooKeeper's `{prefix}/fence`. A restore brings back the snapshot's. */
byte fencev;                    /* its value (0: none) */
byte s_fencev;                  /* the snapshot's */
byte myf[NP];                   /* the fence this holder read at its take (HeldSlot.fence) */
byte tried[NP];                 /* the clock reading of the last renewal attempt: one per ms
                                   (a renewal at the same reading changes nothing) */

/* Faults */
byte budget = BUDGET;
byte ends = ENDS;
bool restart;                   /* a process whose generator ended may start another */
bool stepped, deleted, restored, snapped, forked, downed, late_used;
bool down;                      /* the store is unreachable */
bool unfenced;                  /* restored, not yet fenced */

/* The restart guard's floor, and the issuing limit as published. */
#if R_GUARD
#define GUARD(g) (g)
#else
#define GUARD(g) 0
#endif
#if R_CAP
#define CAPPED(r, c) min(r, (c) + RES)
#else
#define CAPPED(r, c) (r)
#endif

/* The ms the next ID would carry (the state word + 1, or the clock when it is ahead). */
#define NEXTM(p) (CLK(p) > lms[p] -> CLK(p) : (lseq[p] < SEQ - 1 -> lms[p] : lms[p] + 1))
#define NEXTQ(p) (CLK(p) > lms[p] -> 0 : (lseq[p] < SEQ - 1 -> lseq[p] + 1 : 0))

/* core/src/generator/engine.rs::next_monotonic / next_strict (window check in elapsed_of and
 * check_ahead): issue only when floor < now and the ID's ms <= limit. Strict mode issues a
 * subset of what is modelled (it never borrows ahead of the clock). */
#if MONO
#define CAN_ISSUE(p) (lim[p] > 0 && CLK(p) > floor_[p] && NEXTM(p) <= lim[p] && NEXTM(p) < MS)
#else
/* strict mode (the default): the ID carries the clock's ms, never borrowed ahead */
#define CAN_ISSUE(p) (lim[p] > 0 && CLK(p) > floor_[p] && NEXTM(p) <= lim[p] && NEXTM(p) == CLK(p))
#endif

inline issue(p, node) {
  {
    m = NEXTM(p); q = NEXTQ(p);
    /* P1, the core safety property: never two issued IDs equal. */
    assert((issued[node * MS + m] & (1 << q)) == 0);
    issued[node * MS + m] = issued[node * MS + m] | (1 << q);
    /* P2: no holder issues past its R (the R it wrote durably). */
    assert(node == 2 || m <= myR[p]);
    /* P3: a successor issues nothing at or below its predecessor's possible R. */
    assert(node == 2 || m > pred[p]);
    /* P4: each holder's IDs increase. */
    assert(m > lms[p] || (m == lms[p] && q > lseq[p]));
    printf("MSC: H%d issues (node %d, ms %d, seq %d)  [clock %d, floor %d, limit %d]\n", p, node, m, q, CLK(p), floor_[p], lim[p]);
    lms[p] = m; lseq[p] = q;
    if :: node < NS -> iss_max[node] = max(iss_max[node], m) :: else fi;
    any[p] = 1;
    m = 0; q = 0
  }
}

/* Window::publish (core/src/window.rs): R is durable, let the generator issue up to it (never below). */
inline publish(p, r) {
  myR[p] = max(myR[p], r);
#if R_BEFORE
  lim[p] = CAPPED(myR[p], chk[p])
#endif
}

/* A durable write of R by p (acknowledged) */
inline durable(p, r) {
  hiR = max(hiR, r)
}

/* Window::lose: stop at once, for good. */
inline lose(p) {
  printf("MSC: H%d loses its lease (LeaseLost)\n", p);
  lost[p] = 1; lim[p] = 0; pend[p] = 0
}

byte pl[NP];                    /* ghost (file): bit i, holder i was on the slot when p locked it */
#if STORE == FILE
/* Holder i took the slot before p did (before p's lock), for P3. */
#define TOOK_BEFORE(p, i) ((pl[p] >> (i)) & 1)
#else
#define TOOK_BEFORE(p, i) 1
#endif

/* Window::start (core/src/window.rs, called by session.rs::Session::start): the guard and the
 * first R, already durable; k is the clock read before the take's check that the slot is ours
 * (Taken.checked_ms: the first limit is one reserve past it, R_CAP). */
inline start(p, s, g, r, k) {
  slot[p] = s; held[p] = 1;
  /* the predecessors' possible R: what was issued on the slot, what a crashed holder may
   * have issued, and the limit of any other holder still running on it that took the slot
   * before this one (TOOK_BEFORE: a file holder whose file was deleted after this one locked it
   * is a successor, guarded past this one's limit) */
  pred[p] = max(iss_max[s], dead_lim[s]);
  for (i : 0 .. NP - 1) {
    if :: i != p && slot[i] == s && tok[i] != 0 && TOOK_BEFORE(p, i) -> pred[p] = max(pred[p], lim[i]) :: else fi
  }
  i = 0;
  floor_[p] = GUARD(g);
  myR[p] = r;
  chk[p] = k; tried[p] = CLK(p);
  lim[p] = CAPPED(r, chk[p]);
  printf("MSC: H%d takes slot %d at clock %d: guard %d, R %d written, limit %d\n", p, s, CLK(p), g, r, lim[p])
}

/* A process's incarnation ends (crash, close, a lost lease given up): memory is gone. */
inline forget(p) {
  slot[p] = NONE; held[p] = 0; floor_[p] = 0; lim[p] = 0; myR[p] = 0; pred[p] = 0;
  lost[p] = 0; chk[p] = 0; tried[p] = 0; pend[p] = 0; any[p] = 0; tok[p] = 0
}

/* A new incarnation: a fresh token (holder= nonce, etcd lease id, ZooKeeper session). The
 * state word starts afresh (another process); a forked child keeps its parent's. */
inline incarnate(p) {
  inc[p]++;
  tok[p] = p + 1 + NP * inc[p];
  lms[p] = 0; lseq[p] = SEQ - 1
}

#if R_ROLLBACK
/* Rollback detection, as the code has it: remote/protocol.rs::renew_tick reads the store's fence
 * (Holder::read_fence, etcd.rs / zookeeper.rs) BEFORE each renewal's write and stops, writing
 * nothing, when it moved since the take (after a fenced restore every live holder sees it at its
 * next renewal, the holders whose writes the restore kept included). The stores' own signs
 * (etcd.rs Held::saw: an answer at a lower revision; zookeeper.rs rolled_back: a fresh session
 * finding our mark at a lower version) are NOT modelled: the model checks the protocol without
 * them, so it proves no more than the fence read and the compares give. A file lease's renewal
 * reads no fence in the code (its flock and check_held decide) and none here; its take reads the
 * fence again after its first write, as a remote take does (R_TAKEFENCE). */
#define FENCE_MOVED(p) (fencev != myf[p])
#else
#define FENCE_MOVED(p) 0
#endif

#ifndef R_TAKEFENCE
#define R_TAKEFENCE 1
#endif
/* The take's fence read after its first write (protocol.rs::take, file.rs::acquire). */
#if R_TAKEFENCE
#define TAKE_FENCE_MOVED(p) FENCE_MOVED(p)
#else
#define TAKE_FENCE_MOVED(p) 0
#endif

#if R_FENCE
/* A restored store is not taken from until fenced (the operator's procedure,
 * node-ids.md "Backup and restore"; fence.rs: every taker reads the fence). */
#define TAKE_OK (!down && !unfenced)
#else
#define TAKE_OK (!down)
#endif

/* Issuing is EAGER in the lease configurations: after every step, every generator whose
 * window admits the clock's ms issues its ID for that ms (strict mode, one sequence per ms).
 * Issuing only ever adds IDs, so the eager run has every ID a lazy run could have had at that
 * point (an ID withheld and issued later carries the same (node, ms), or a later ms). */
#if STORE != 0
#define EAGER_ALL() \
  for (e : 0 .. NP - 1) { if :: !INHERITED(e) && CAN_ISSUE(e) -> issue(e, slot[e]) :: else fi }; e = 0
#else
#define EAGER_ALL() skip
#endif
byte e, m, q;                   /* scratch for EAGER_ALL (always 0 between steps) */
#if STORE == ETCD || STORE == ZK
#define ALIVE_NEW(p) alive = alive | (1 << tok[p])
#else
#define ALIVE_NEW(p) skip
#endif
#if STORE == FILE
#include "file.pml"
#elif STORE == ETCD || STORE == ZK
#include "remote.pml"
#else
#include "fork.pml"
#endif

/* ---------------------------------------------------------------------------------------- */
/* The clock                                                                                */
active proctype Clock() {
  do
#if LIVE
  ::  atomic { timeout && now_t < TMAX -> now_t++; printf("MSC: time %d\n", now_t); EAGER_ALL() }         /* lazy: time moves when nothing else can */
#else
  :: atomic { now_t < TMAX -> now_t++; printf("MSC: time %d\n", now_t); EAGER_ALL() }
#endif
  :: now_t >= TMAX -> break
  od
}

#if STORE != 0
/* ---------------------------------------------------------------------------------------- */
/* The environment: faults, each at most once, at most BUDGET in all                         */
active proctype Env() {
  byte i, s;
  do
#if !LIVE && CLOCKSTEP
  /* The wall clock stepped back or forward within bounds (host clock: core/src/clock.rs;
   * a step past max_forward_step_ms is refused by core/src/forward.rs::check). */
  :: atomic { budget > 0 && !stepped -> stepped = 1; budget--;
       select(i : 0 .. NP - 1);
       if :: off[i] = 0 :: off[i] = 2 fi;
       printf("MSC: ENV clock of H%d stepped by %d ms\n", i, off[i] - 1); i = 0; EAGER_ALL() }
#endif
  /* The store goes down and comes back. */
#if DOWN
  :: atomic { budget > 0 && !downed -> downed = 1; budget--; down = 1; printf("MSC: ENV store down\n") }
#endif
  :: atomic { down -> down = 0; printf("MSC: ENV store back\n") }
#if !LIVE && RESTORE
  /* A snapshot of the store is taken (no fault: a backup) ... */
  :: atomic { !snapped -> snapped = 1; SNAPSHOT(); s = 0; printf("MSC: ENV snapshot of the store taken\n") }
  /* ... and later the store is restored to it. The procedure (node-ids.md "Backup and restore")
   * fences the restored store before any client reaches it: one step. FENCE_WINDOW=1 lets
   * clients (live holders, a take under way) act on it before the fence, which the procedure
   * forbids (the finding finding-unfenced-window shows why); without R_FENCE takers do not wait
   * for the fence either (the mutation no-fence). */
  :: atomic { budget > 0 && snapped && !restored -> restored = 1; budget--;
       RESTORE_STORE(); unfenced = 1;
       printf("MSC: ENV store restored to the snapshot\n");
#if R_FENCE && !FENCE_WINDOW
       unfenced = 0; FENCE_STORE(); EAGER_ALL();
       printf("MSC: ENV polyflake lease fence before any client reaches it: fence %d\n", hiR);
#endif
       s = 0; i = 0 }
  /* `polyflake lease fence`, later. */
  :: atomic { unfenced -> unfenced = 0; FENCE_STORE(); s = 0; EAGER_ALL();
       printf("MSC: ENV polyflake lease fence: fence %d\n", hiR) }
#endif
  ENV_STORE_FAULTS
  :: atomic { budget == 0 && !down && !unfenced -> break }
#if LIVE
  :: atomic { !down -> break }                  /* no (more) faults */
#endif
  od
}
#endif

#if LIVE
/* Liveness under weak fairness: a holder that holds a slot, whose store is up (an outage
 * ends) and whose clock is sane, eventually issues. */
#if NH == 3
ltl live { [] (held[0] -> <> any[0]) && [] (held[1] -> <> any[1]) && [] (held[2] -> <> any[2]) }
#else
ltl live { [] (held[0] -> <> any[0]) && [] (held[1] -> <> any[1]) }
#endif
#endif
