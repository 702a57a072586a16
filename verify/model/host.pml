/*
 * One node id on one host, held in turn (or at once, if a rule is missing) by processes that
 * take it as a static (fixed) node id or as a lease's slot, for spin. A model of its own (it
 * does not include lease.pml): one host, one node id (0), one host clock, NH processes.
 *
 * `make model` (all of it) and `make test-model` (the bounded part): see verify/model/check.sh and
 * docs/reliability.md ("One node id on one host: static and lease holders"). Every transition
 * names the Rust function it models; those functions carry a comment "Modelled in
 * verify/model/host.pml: ..." pointing back here.
 *
 * The world:
 *   - the host-wide claim (core/src/registry.rs: an abstract Unix socket named after the scope,
 *     the layout and the node id; the kernel frees it when its process dies);
 *   - the node id's mark on the host (core/src/lease/host.rs, host/mark.rs): a file in the state
 *     directory with R and the clean-close state word (ms, seq), and its flock;
 *   - a file lease store with one slot, slot 0 (core/src/lease/file.rs): the slot file (absent
 *     at first, or left complete by a holder long ago: init chooses), its record's R and
 *     mtime, and its flock;
 *   - one wall clock for every process: it runs 1..TMAX (true time) and may step BACK by 1 ms,
 *     STEPS times, at any moment (between holders or under one);
 *   - processes 0..NH-1: each makes at most one generator of node 0 at a time (the process's
 *     own table, registry.rs, refuses a second), a static one or a lease one, strict or
 *     monotonic (max_lead_ms = LEAD), and ends it with a clean close (then may make another:
 *     the process's table keeps its last state word), an exit with it open (the C library's
 *     exit handlers: host.rs at_exit for a static holder's mark, nothing for a lease) or a kill
 *     (no final write). A process that died is replaced by a new one (an empty table).
 *
 * The steps carry the names the code's comments give them ("Modelled in verify/model/host.pml: ..."):
 * inline claim (registry::claim, every source), StaticHolder (the take, the renewal, the exit
 * step: inline static_take, the renewal and exit steps of Proc), LeaseTaker (the claim before the
 * slot, the mark read: inline lease_take) and LeaseHolder (the close: the close steps of Proc).
 * One proctype, Proc, is every process: each take chooses a static id or the lease's slot.
 *
 * Abstract IDs are (ms, seq) of node 0: SEQ = 2 sequences per ms. A call of next_id is two
 * steps, as in generator/engine.rs: the window check and the computation of the next state
 * word from the state it loaded, then the compare-and-swap (which fails once the state word
 * was taken by a close or an exit, CLOSED_STATE). One call in flight per process.
 *
 * Properties (assertions at every issued ID):
 *   P1 no two issued IDs are equal;
 *   P2 no holder issues past the R it wrote durably (a static holder without a mark has none);
 *   P4 the IDs of each generator increase.
 *
 * Rules (1 = the code, 0 = the mutation, which must fail):
 *   R_ONECLAIM    one host-wide claim per node id whatever the source: a lease taker claims
 *                 the node id of its slot as a static holder does (session.rs SlotContext::claim)
 *   R_AFTERCLAIM  the clock reading that decides a handover is taken after the claim and the
 *                 mark's flock (host.rs hold, builder.rs spent_now); with no clean-close state
 *                 the successor counts that millisecond as spent
 *   R_MARK        a static successor goes by the mark: after a crash its R, after a clean close
 *                 or an exit the state word to continue after (mark.rs succession)
 *   R_LEAD        the clean-close mark holds the last ID's state word and R at its ms, not the
 *                 clock's (runtime.rs close, host.rs MarkFile::finish): a monotonic lead is kept
 *   R_BEFORE      a mark's R is written durably before it is published as the limit
 *                 (host.rs MarkFile::renew)
 *   R_EXIT        the exit handler shuts the window and takes the state word before the mark's
 *                 final write (host.rs at_exit::on_exit)
 *   R_CROSS       a lease taker reads the host mark of its slot's node id after its claim, as a
 *                 floor under its guard (host.rs take_mark, lease_floor)
 *   R_CROSSCLOSE  a lease's clean close writes the host mark (R = last ms, state = last state)
 *                 before releasing the claim (runtime.rs close, host.rs leave_lease_mark)
 *
 * Options (the environment a configuration allows):
 *   LEASES, STATICS  processes may take node 0 as a lease slot / as a static node id
 *   MONO             generators may be monotonic (each take chooses)
 *   MARKLESS         1: a static take may find the state directory unusable (RestartGuard::Auto
 *                    issues without a mark; RestartGuard::Off likewise); 2: every static take
 *                    does (no marks at all: the claim and the reading after it are all there is)
 *   INITMARK         the host may hold a mark from long ago when the run starts (init chooses:
 *                    none, a clean close's at (1, 1), a crash's with R 1)
 *   KILLS, EXITS     process deaths allowed: a kill, an exit with the generator open
 *   STEPS            clock steps back (1 ms each)
 *   GENS, ENDS, NH   generators made in a run, process deaths in a run, processes at once
 *   INFLIGHT         1: a call is two steps (the window check, then the compare-and-swap), so a
 *                    close or an exit can fall between them; 0: one step (for the largest
 *                    configuration: with the state word taken before any final write, which
 *                    the two-step runs check, a call that passed the window check and swaps
 *                    after the window was shut issues exactly what the one-step call issued
 *                    just before the shut; one whose swap comes after the state was taken
 *                    issues nothing)
 *   LEASE_MARK       a lease holder keeps the host mark as a static holder does: what it may
 *                    issue up to written to it at the take (state -1) and at every renewal
 *                    (`Window::publish` through `MarkMirror`), and its clean close writes R at
 *                    the last ms as a static close does; so a static successor of a lease holder
 *                    that was killed or exited finds its R, never an older holder's state
 *   UNLOCK_FIRST     a holder's clean close lets go of the mark's (and the slot's) lock before it
 *                    releases the claim (`LeaseRuntime::close`)
 *   SPENT_ALWAYS     every taker, static or lease, counts the millisecond of its reading after
 *                    the claim as spent, whatever the mark says (a holder without a mark leaves
 *                    nothing a successor could read): `Window::spend_millisecond`, the builder
 *
 * The three were found by this model (the code without them repeated IDs when a lease holder
 * died without a clean close, when a lease closed in the gap between a static close's claim
 * release and its unlock, and after a holder without a mark); each is now a rule of the code,
 * and its removal a mutation of verify/model/check.sh that must fail (docs/reliability.md). lease.pml's P3 (nothing at or below a predecessor's possible R) has no
 * counterpart here: one node id, so P1 is checked directly.
 */

#ifndef NH
#define NH 2              /* processes at once */
#endif
#ifndef TMAX
#define TMAX 3            /* the true time runs 1..TMAX */
#endif
#ifndef GENS
#define GENS 3            /* generators made in a run, in all */
#endif
#ifndef ENDS
#define ENDS 1            /* process deaths in a run (kills and exits) */
#endif
#ifndef STEPS
#define STEPS 1           /* clock steps back */
#endif
#ifndef LEASES
#define LEASES 1
#endif
#ifndef STATICS
#define STATICS 1
#endif
#ifndef MONO
#define MONO 1
#endif
#ifndef MARKLESS
#define MARKLESS 0
#endif
#ifndef KILLS
#define KILLS 1
#endif
#ifndef EXITS
#define EXITS 1
#endif
#ifndef LEASE_MARK
#define LEASE_MARK 1
#endif
#ifndef SPENT_ALWAYS
#define SPENT_ALWAYS 1
#endif
#ifndef INITMARK
#define INITMARK 1
#endif
#ifndef INFLIGHT
#define INFLIGHT 1
#endif
#ifndef UNLOCK_FIRST
#define UNLOCK_FIRST 1
#endif

#ifndef R_ONECLAIM
#define R_ONECLAIM 1
#endif
#ifndef R_AFTERCLAIM
#define R_AFTERCLAIM 1
#endif
#ifndef R_MARK
#define R_MARK 1
#endif
#ifndef R_LEAD
#define R_LEAD 1
#endif
#ifndef R_BEFORE
#define R_BEFORE 1
#endif
#ifndef R_EXIT
#define R_EXIT 1
#endif
#ifndef R_CROSS
#define R_CROSS 1
#endif
#ifndef R_CROSSCLOSE
#define R_CROSSCLOSE 1
#endif

#define SEQ 2             /* sequences per ms */
#define RES 1             /* reserve_ms of the mark and of the lease */
#define LEAD 1            /* max_lead_ms of a monotonic generator */
#define MS (TMAX + STEPS + LEAD + 2)   /* ms an ID may carry: 1..MS-1 */
#define OPEN 255          /* the limit of a window without R (a static id without a mark) */

#define STATIC 1
#define LEASE 2

/* What a process's generator is doing */
#define NONE 0            /* no generator */
#define READ 1            /* mutation R_AFTERCLAIM=0: the clock read, the claim not yet made */
#define RUN 2             /* issuing */
#define SHUT 3            /* a clean close: the window shut, the state word not yet taken */
#define UNLOCK 4          /* a clean close: written and the claim released, not yet unlocked */
#define EXIT 5            /* an exit: the window shut by the exit handler */
#define EXITW 6           /* mutation R_EXIT=0: the exit handler wrote the mark first */

#define max(a, b) ((a) > (b) -> (a) : (b))
#define min(a, b) ((a) < (b) -> (a) : (b))

/* ---------------------------------------------------------------------------------------- */
/* The clock: ms = the true time + STEPS - the steps back so far (always at least 1).          */
byte now_t = 1;
byte back;
byte steps = STEPS;
#define CLK (now_t + STEPS - back)

/* ---------------------------------------------------------------------------------------- */
/* The host                                                                                 */
byte claimed;                   /* the host-wide claim on node 0: process + 1; 0 free */
bool mk_ok;                     /* the mark is complete (mark.rs parse) */
byte mk_R;                      /* its high_water_ms */
byte mk_ms;                     /* its last_state: (ms, seq); ms 0 = -1 (none) */
byte mk_seq;
byte mk_lk;                     /* its flock: process + 1; 0 none */
bool sl_ex;                     /* the lease's slot file exists */
bool sl_ok;                     /* its record is complete */
byte sl_R;                      /* its R */
byte sl_T;                      /* its mtime */
byte sl_lk;                     /* its flock: process + 1; 0 none */

/* ---------------------------------------------------------------------------------------- */
/* The processes and their generators                                                       */
byte kind[NH];                  /* the open generator: 0, STATIC or LEASE */
byte phase[NH];
bool mono[NH];                  /* monotonic (else strict) */
bool nomark[NH];                /* a static id issuing without a mark (MARKLESS) */
byte rd[NH];                    /* the handover reading (mutation R_AFTERCLAIM=0) */
byte guard[NH];                 /* Window.guard_until_ms: the previous holder's R (0: none) */
byte floor_[NH];                /* Window.floor: the clock must be above it (0: -1) */
byte lim[NH];                   /* Window.limit: 0 once shut; OPEN without R */
byte myR[NH];                   /* R as this holder last wrote it durably */
byte lms[NH];                   /* the state word: ms (0: -1) ... */
byte lseq[NH];                  /* ... and sequence */
bool swapped[NH];               /* the state word taken (CLOSED_STATE) */
byte pend[NH];                  /* mutation R_BEFORE=0: an R published, not yet written */
bool fl[NH];                    /* a call in flight: past the window check, with the ID it */
byte fm[NH];                    /* will swap in (its compare-and-swap fails only once the */
byte fq[NH];                    /* state word was taken: one call in flight per process) */
byte tab_ms[NH];                /* the process's table (registry.rs Entry.last_state) */
byte tab_seq[NH];

/* Ghost: what was issued: bit q of issued[ms] */
byte issued[MS];

byte gens = GENS;
byte ends = ENDS;
byte g, r, c, sm, sq;           /* scratch, 0 between steps */

/* The state word after (lms, lseq), and the next ID at clock reading c: max(state + 1, (c, 0))
 * (generator/engine.rs next_strict / next_monotonic). */
#define INCM(p) (lseq[p] < SEQ - 1 -> lms[p] : lms[p] + 1)
#define INCQ(p) (lseq[p] < SEQ - 1 -> lseq[p] + 1 : 0)
#define NEXTM(p) (CLK > INCM(p) -> CLK : INCM(p))
#define NEXTQ(p) (CLK > INCM(p) -> 0 : INCQ(p))

/* A renewal would change R or the limit (one that changes neither writes what is there). */
#define RENEWS(p) (max(CLK + RES, myR[p]) != myR[p] || min(max(CLK + RES, myR[p]), CLK + RES) != lim[p])

/* engine.rs elapsed_of (floor < now <= limit), then strict: the ID carries the clock's ms (a
 * clock behind the last ID, or a spent ms, waits); monotonic: check_ahead (the ID's ms within
 * the limit and at most LEAD ahead of the clock). A closed state word is past every window. */
#define CAN_ISSUE(p) \
  (kind[p] != 0 && !swapped[p] && CLK > floor_[p] && CLK <= lim[p] && NEXTM(p) < MS && \
   (mono[p] -> (NEXTM(p) <= lim[p] && NEXTM(p) - CLK <= LEAD) : NEXTM(p) == CLK))

/* The compare-and-swap of a call in flight succeeded: the ID is issued. */
inline issue(p) {
  /* P1: never two issued IDs equal. */
  assert((issued[fm[p]] & (1 << fq[p])) == 0);
  issued[fm[p]] = issued[fm[p]] | (1 << fq[p]);
  /* P2: no holder issues past the R it wrote durably. */
  assert(fm[p] <= myR[p]);
  /* P4: each generator's IDs increase (above its state word: its last ID, or where it started). */
  assert(fm[p] > lms[p] || (fm[p] == lms[p] && fq[p] > lseq[p]));
  lms[p] = fm[p]; lseq[p] = fq[p];
  printf("MSC: P%d issues (ms %d, seq %d)  [clock %d, floor %d, limit %d, R %d]\n", p, fm[p], fq[p], CLK, floor_[p], lim[p], myR[p])
}

/* The generator is gone (closed, or its process died). */
inline forget(p) {
  kind[p] = 0; phase[p] = NONE; mono[p] = 0; nomark[p] = 0; rd[p] = 0; guard[p] = 0;
  floor_[p] = 0; lim[p] = 0; myR[p] = 0; lms[p] = 0; lseq[p] = 0; swapped[p] = 0;
  pend[p] = 0; fl[p] = 0; fm[p] = 0; fq[p] = 0
}

/* The process dies (a kill, or the end of an exit): the kernel frees the claim and the flocks;
 * its memory (its table) is gone; a new process takes its place. */
inline die(p) {
  if :: claimed == p + 1 -> claimed = 0 :: else fi;
  if :: mk_lk == p + 1 -> mk_lk = 0 :: else fi;
  if :: sl_lk == p + 1 -> sl_lk = 0 :: else fi;
  forget(p); tab_ms[p] = 0; tab_seq[p] = 0;
  printf("MSC: P%d has died (a new process P%d, with nothing of the old one's memory, takes its place)\n", p, p)
}

/* The state word taken by a close or an exit: (sm, sq). */
inline take_state(p) {
  swapped[p] = 1; sm = lms[p]; sq = lseq[p]
}

/* Claim::release: the process's table keeps the later state word; the host-wide name is freed. */
inline release(p) {
  if :: claimed == p + 1 -> claimed = 0 :: else fi;
  if :: sm > tab_ms[p] || (sm == tab_ms[p] && sm > 0 && sq > tab_seq[p]) -> tab_ms[p] = sm; tab_seq[p] = sq
     :: else fi
}

/* The mark's final write of a static holder (MarkFile::finish, at_exit exit_write): R at the last
 * issued ms (never below the guard, never above R) and the state word to continue after. */
inline final_mark(p) {
#if R_LEAD
  mk_R = min(max(sm, guard[p]), myR[p]); mk_ms = sm; mk_seq = sq;
#else
  /* mutation: the clock's ms recorded, counted spent, instead of the last state */
  mk_R = min(max(CLK, guard[p]), myR[p]); mk_ms = CLK; mk_seq = SEQ - 1;
#endif
  mk_ok = 1
}

/* ---------------------------------------------------------------------------------------- */
/* registry::claim (Reach::Host): the host-wide name of node 0, one for every source (R_ONECLAIM);
 * the caller has checked it is free (a bind that fails is NodeIdInUse, or a slot skipped). */
inline claim(p) {
  claimed = p + 1
}

/* StaticHolder, the take (R_MARK, R_AFTERCLAIM). The take of a static node id: builder.rs Builder::build -> registry::claim (Reach::Host),
 * host.rs hold (the mark's flock, the clock read, the mark read, R written durably), then the
 * start state (the mark's clean-close state, else spent_now) and, monotonic, the floor lowered
 * by the lead limit. The claim and the mark's flock are one step here: a taker that finds the
 * flock held after its claim is refused (NodeIdInUse) and takes nothing. */
inline static_take(p) {
  gens--; kind[p] = STATIC; claim(p);
  if :: mono[p] = 0 :: MONO -> mono[p] = 1 fi;
#if R_AFTERCLAIM
  c = CLK;                                    /* after the claim and the flock */
#else
  c = rd[p];                                  /* mutation: read before the claim */
#endif
  if
  :: MARKLESS != 0 ->
     /* the state directory cannot keep a mark: auto mode issues without one (no R, no guard) */
     nomark[p] = 1; sm = c; sq = SEQ - 1; g = 0;
     lim[p] = OPEN; myR[p] = OPEN;
     printf("MSC: P%d takes node 0 as a static id (no mark: the directory cannot keep one) at clock %d\n", p, c)
  :: MARKLESS != 2 && mk_lk == 0 ->
     mk_lk = p + 1;
     printf("MSC: P%d claims node 0 (static), locks the mark and reads it: complete %d, R %d, state (ms %d, seq %d)\n", p, mk_ok, mk_R, mk_ms, mk_seq);
#if R_MARK
     if
     :: mk_ok && mk_ms > 0 -> g = (mk_R <= mk_ms -> mk_ms - 1 : mk_R); sm = mk_ms; sq = mk_seq
     :: mk_ok && mk_ms == 0 -> g = mk_R; sm = c; sq = SEQ - 1        /* a crash: R; spent_now */
     :: !mk_ok -> g = 0; sm = c; sq = SEQ - 1                         /* no mark: spent_now */
     fi;
#else
     g = 0; sm = c; sq = SEQ - 1;              /* mutation: the mark ignored */
#endif
     r = max(max(g, c), sm) + RES;
     mk_ok = 1; mk_R = r; mk_ms = 0; mk_seq = 0;   /* R durable, last_state -1, before any ID */
     myR[p] = r; lim[p] = min(r, c + RES);
     printf("MSC: P%d takes node 0 as a static id at clock %d: mark read, guard %d, R %d written, limit %d\n", p, c, g, r, lim[p])
  fi;
#if SPENT_ALWAYS
  if :: c > sm || (c == sm && sq < SEQ - 1) -> sm = c; sq = SEQ - 1 :: else fi;
#endif
  /* resume: the process's own table (a generator of this process closed before) */
  if :: tab_ms[p] > sm || (tab_ms[p] == sm && tab_seq[p] > sq) -> sm = tab_ms[p]; sq = tab_seq[p] :: else fi;
  guard[p] = g; floor_[p] = g;
  if
  :: mono[p] ->
     /* monotonic: the state starts above the guard, the floor lowered by the lead limit */
     if :: g > sm || (g == sm && sq < SEQ - 1) -> sm = g; sq = SEQ - 1 :: else fi;
     floor_[p] = (g > LEAD -> g - LEAD : 0)
  :: else
  fi;
  lms[p] = sm; lseq[p] = sq;
  phase[p] = RUN;
  printf("MSC: P%d (monotonic: %d) starts after (ms %d, seq %d), floor %d\n", p, mono[p], sm, sq, floor_[p]);
  g = 0; r = 0; c = 0; sm = 0; sq = 0
}

/* LeaseTaker: the claim before the slot (R_ONECLAIM), the mark read (R_CROSS). The take of the
 * lease's slot 0: file.rs acquire (the slot file's flock, SlotContext::claim,
 * the clock read, the record's guard, host.rs take_mark, R written durably, Window::start).
 * The lease's state word starts at -1. */
inline lease_take(p) {
  gens--; kind[p] = LEASE; sl_lk = p + 1;
#if R_ONECLAIM
  claim(p);
  printf("MSC: P%d locks slot file 0 (record: complete %d, R %d), claims node 0; the host mark: complete %d, R %d, state (ms %d, seq %d)\n", p, sl_ok, sl_R, mk_ok, mk_R, mk_ms, mk_seq);
#else
  printf("MSC: P%d locks slot file 0 (record: complete %d, R %d), does NOT claim node 0 (mutation); the host mark: complete %d, R %d, state (ms %d, seq %d)\n", p, sl_ok, sl_R, mk_ok, mk_R, mk_ms, mk_seq);
#endif
  if :: mono[p] = 0 :: MONO -> mono[p] = 1 fi;
  c = CLK;
  if :: !sl_ex -> sl_ex = 1; sl_ok = 0; sl_T = c :: else fi;      /* a new slot file */
  g = (sl_ok -> sl_R : max(sl_T, c) + RES);                        /* record_guard */
#if R_CROSS
  if :: mk_ok -> g = max(g, (mk_ms > 0 -> max(mk_R, mk_ms) : mk_R)) :: else fi;   /* host_floor */
#endif
  r = max(g, c) + RES;
  sl_ok = 1; sl_R = r; sl_T = c;
#if LEASE_MARK
  /* proposal: the host mark carries the lease's R while it lives (never below its own R) */
  if :: mk_lk == 0 -> mk_R = max(r, (mk_ok -> mk_R : 0)); mk_ok = 1; mk_ms = 0; mk_seq = 0 :: else fi;
#endif
  guard[p] = g; floor_[p] = g; myR[p] = r; lim[p] = min(r, c + RES);
#if SPENT_ALWAYS
  lms[p] = c; lseq[p] = SEQ - 1;
#else
  lms[p] = 0; lseq[p] = SEQ - 1;
#endif
  phase[p] = RUN;
  printf("MSC: P%d takes node 0 as lease slot 0 (monotonic: %d) at clock %d: guard %d, R %d written, limit %d\n", p, mono[p], c, g, r, lim[p]);
  g = 0; r = 0; c = 0
}

proctype Proc(byte p) {
end_loop:
  do
  /* ---- takes ---- */
#if STATICS
#if R_AFTERCLAIM
  :: atomic { kind[p] == 0 && phase[p] == NONE && gens > 0 && (claimed == 0 && (mk_lk == 0 || MARKLESS)) -> static_take(p) }
#else
  :: atomic { kind[p] == 0 && phase[p] == NONE && gens > 0 -> phase[p] = READ; rd[p] = CLK;
       printf("MSC: P%d reads the clock (%d) BEFORE claiming (mutation)\n", p, rd[p]) }
  :: atomic { kind[p] == 0 && phase[p] == READ && gens > 0 && (claimed == 0 && (mk_lk == 0 || MARKLESS)) -> static_take(p) }
#endif
#endif
#if LEASES
  :: atomic { kind[p] == 0 && phase[p] == NONE && gens > 0 && sl_lk == 0 && (claimed == 0 || !R_ONECLAIM) -> lease_take(p) }
#endif

  /* ---- next_id: the window check and the next state word, then the compare-and-swap ---- */
#if INFLIGHT
  :: atomic { !fl[p] && CAN_ISSUE(p) -> fl[p] = 1; fm[p] = NEXTM(p); fq[p] = NEXTQ(p) }
  :: atomic { fl[p] ->
       if
       :: !swapped[p] -> issue(p)
       :: else -> printf("MSC: P%d call in flight fails its compare-and-swap (the state word was taken)\n", p)
       fi;
       fl[p] = 0; fm[p] = 0; fq[p] = 0 }
#else
  :: atomic { CAN_ISSUE(p) -> fm[p] = NEXTM(p); fq[p] = NEXTQ(p); issue(p); fm[p] = 0; fq[p] = 0 }
#endif

  /* ---- StaticHolder, the renewal (R_BEFORE), and a lease's renewal:
   *      host.rs MarkFile::renew (the mark), file.rs SlotFile::renew (the lease):
   *      R = max(now + reserve, R) written durably, then Window::publish ---- */
  :: atomic { phase[p] == RUN && !nomark[p] && pend[p] == 0 && RENEWS(p) ->
       c = CLK; r = max(c + RES, myR[p]);
#if !R_BEFORE
       if
       :: kind[p] == STATIC ->
          /* mutation: the limit published before the mark is written */
          pend[p] = r; lim[p] = min(r, c + RES);
          printf("MSC: P%d renewal publishes limit %d BEFORE writing R %d (mutation)\n", p, lim[p], r)
       :: else
       fi;
#endif
       if
       :: pend[p] != 0 -> skip
       :: else ->
          if
          :: kind[p] == STATIC -> mk_ok = 1; mk_R = r; mk_ms = 0; mk_seq = 0
          :: else -> sl_ok = 1; sl_R = r; sl_T = c;
#if LEASE_MARK
             if :: mk_lk == 0 -> mk_ok = 1; mk_R = max(r, mk_R); mk_ms = 0; mk_seq = 0 :: else fi;
#endif
             skip
          fi;
          myR[p] = r; lim[p] = min(r, c + RES);
          printf("MSC: P%d renews: R %d written, limit %d\n", p, r, lim[p])
       fi;
       c = 0; r = 0 }
#if !R_BEFORE
  :: atomic { pend[p] != 0 ->
       if :: phase[p] == RUN || phase[p] == SHUT || phase[p] == EXIT -> mk_ok = 1; mk_R = pend[p]; mk_ms = 0; mk_seq = 0; myR[p] = pend[p] :: else fi;
       printf("MSC: P%d renewal writes R %d\n", p, pend[p]); pend[p] = 0 }
#endif

#if KILLS
  /* ---- a kill (SIGKILL, OOM; or an exit with a lease or a mark-less static id open, which
   *      leaves nothing either): no final write ---- */
  :: atomic { ends > 0 && kind[p] != 0 -> ends--;
       printf("MSC: P%d is killed\n", p); die(p) }
#endif

  /* ---- a clean close (LeaseHolder, the close: R_CROSS, its close half R_CROSSCLOSE; a static
   *      holder's the same steps): generator/mod.rs Generator::release (Window::close, then the state word
   *      swapped to CLOSED_STATE), runtime.rs LeaseRuntime::close (the final write: the mark by
   *      MarkFile::finish, or the slot record by SlotFile::finish then the host mark by
   *      leave_lease_mark), Claim::release, then the session dropped (the flock let go) ---- */
  :: atomic { phase[p] == RUN && pend[p] == 0 -> phase[p] = SHUT; lim[p] = 0;
       printf("MSC: P%d closes: window shut\n", p) }
  :: atomic { phase[p] == SHUT && pend[p] == 0 ->
       take_state(p);
       if
       :: kind[p] == STATIC && !nomark[p] ->
          final_mark(p);
          printf("MSC: P%d close: mark R %d, state (ms %d, seq %d) written; claim released\n", p, mk_R, mk_ms, mk_seq)
       :: kind[p] == STATIC && nomark[p] ->
          printf("MSC: P%d close (no mark); claim released\n", p)
       :: kind[p] == LEASE ->
          r = (sm > 0 -> min(max(sm, guard[p]), myR[p]) : min(guard[p], myR[p]));
          sl_R = r;                                                    /* SlotFile::finish */
#if LEASE_MARK
          if
          :: mk_lk == 0 ->                  /* proposal: as a static holder's final write */
             mk_R = r; mk_ms = sm; mk_seq = sq; mk_ok = 1;
             printf("MSC: P%d close: slot R %d; host mark R %d, state (ms %d, seq %d) written; claim released\n", p, r, mk_R, mk_ms, mk_seq)
          :: else ->
             printf("MSC: P%d close: slot R %d; host mark NOT written (its flock held: %d); claim released\n", p, r, mk_lk)
          fi;
#elif R_CROSSCLOSE
          if
          :: sm > 0 && mk_lk == 0 ->                     /* leave_lease_mark */
             mk_R = max(sm, (mk_ok -> mk_R : 0));
             if :: !mk_ok || mk_ms < sm || (mk_ms == sm && mk_seq < sq) -> mk_ms = sm; mk_seq = sq :: else fi;
             mk_ok = 1;
             printf("MSC: P%d close: slot R %d; host mark R %d, state (ms %d, seq %d) written; claim released\n", p, r, mk_R, mk_ms, mk_seq)
          :: else ->
             printf("MSC: P%d close: slot R %d; host mark NOT written (nothing issued, or its flock held: %d); claim released\n", p, r, mk_lk)
          fi;
#else
          printf("MSC: P%d close: slot R %d; no host mark (mutation); claim released\n", p, r);
#endif
          r = 0
       fi;
#if UNLOCK_FIRST
       if :: mk_lk == p + 1 -> mk_lk = 0 :: else fi;    /* proposal: the mark's flock first */
#endif
       release(p); phase[p] = UNLOCK; sm = 0; sq = 0 }
  :: atomic { phase[p] == UNLOCK ->
       if :: mk_lk == p + 1 -> mk_lk = 0 :: else fi;
       if :: sl_lk == p + 1 -> sl_lk = 0 :: else fi;
       printf("MSC: P%d close: flock let go\n", p);
       forget(p) }

#if EXITS
  /* ---- StaticHolder, the exit step (R_EXIT): an exit with a static generator open,
   *      host.rs at_exit::on_exit ---- */
#if R_EXIT
  :: atomic { ends > 0 && phase[p] == RUN && kind[p] == STATIC && !nomark[p] && pend[p] == 0 ->
       ends--; phase[p] = EXIT; lim[p] = 0;
       printf("MSC: P%d exits with its generator open: the exit handler shuts the window\n", p) }
  :: atomic { phase[p] == EXIT ->
       take_state(p); final_mark(p);
       printf("MSC: P%d exit handler: state taken, mark R %d, state (ms %d, seq %d) written; the process dies\n", p, mk_R, mk_ms, mk_seq);
       sm = 0; sq = 0; die(p) }
#else
  :: atomic { ends > 0 && phase[p] == RUN && kind[p] == STATIC && !nomark[p] && pend[p] == 0 ->
       ends--; phase[p] = EXITW;
       sm = lms[p]; sq = lseq[p]; final_mark(p);
       printf("MSC: P%d exits: the exit handler writes the mark FIRST (mutation): R %d, state (ms %d, seq %d)\n", p, mk_R, mk_ms, mk_seq);
       sm = 0; sq = 0 }
  :: atomic { phase[p] == EXITW ->
       lim[p] = 0; swapped[p] = 1;
       printf("MSC: P%d exit handler: window shut, state taken; the process dies\n", p);
       die(p) }
#endif
#endif

  od
}

/* ---------------------------------------------------------------------------------------- */
/* The wall clock: time runs; a step back (NTP, a VM restored, an operator) at any moment.      */
active proctype Clock() {
end_clock:
  do
  :: atomic { now_t < TMAX -> now_t++; printf("MSC: time %d (clock %d)\n", now_t, CLK) }
  :: atomic { steps > 0 -> steps--; back++; printf("MSC: ENV the clock steps back 1 ms (clock %d)\n", CLK) }
  :: atomic { now_t >= TMAX && steps == 0 -> break }
  od
}

init {
  byte i;
  atomic {
    /* the lease's slot file: none yet, or left by a holder long ago (a complete record, R 1) */
    if :: skip :: LEASES -> sl_ex = 1; sl_ok = 1; sl_R = 1; sl_T = 1 fi;
    /* the node id's mark: none, or left by a static holder long ago (a clean close's, a crash's) */
    if :: skip :: INITMARK -> mk_ok = 1; mk_R = 1; mk_ms = 1; mk_seq = SEQ - 1
                :: INITMARK -> mk_ok = 1; mk_R = 1 fi;
    printf("MSC: ENV at the start: clock %d; slot file 0: exists %d, R %d; the mark: complete %d, R %d, state (ms %d, seq %d)\n", CLK, sl_ex, sl_R, mk_ok, mk_R, mk_ms, mk_seq);
    for (i : 0 .. NH - 1) { run Proc(i) }
  }
}
