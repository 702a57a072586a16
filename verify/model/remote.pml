/*
 * The remote leases, included by lease.pml when STORE == 2 (etcd, core/src/lease/etcd.rs) or
 * STORE == 3 (ZooKeeper, core/src/lease/zookeeper.rs); what they share is
 * core/src/lease/remote.rs, and their one take and renewal is core/src/lease/remote/protocol.rs
 * (take, renew_tick, finish) over each store's Store and Holder implementations.
 *
 * The store: per slot, the slot key (etcd: `{prefix}/slot/NNNN` on an etcd lease; ZooKeeper:
 * the EPHEMERAL znode of a session), holding the holder's token (0: absent), and the mark
 * `{prefix}/hwm/NNNN` (R; 0: absent) with its mod revision (etcd: the store's revision when it
 * was written) or version (ZooKeeper: stored + 1; 0: absent). A token names one incarnation of
 * one process AND its etcd lease / ZooKeeper session; `alive` has a bit per live lease/session.
 */

byte skey[NS];                  /* the slot key / znode: its holder's token, 0: absent */
byte mk[NS];                    /* the mark R (0: absent) */
byte mver[NS];                  /* etcd: mod revision; ZooKeeper: version + 1; 0: absent */
unsigned alive : 16;            /* bit t: the etcd lease / ZooKeeper session of token t lives */
unsigned s_alive : 16;          /* the leases / sessions the snapshot holds */
byte hv[NP];                    /* Held.hwm_revision / Held.hwm_version + 1 (0: none) */
byte unsure[NP];                /* ZooKeeper Held.unsure: a mark written without an answer */
byte late_r[NP];                /* a write in flight after its caller timed out: its R ... */
byte late_v[NP];                /* ... and the revision / version it compares with */
byte s_skey[NS];
byte s_mk[NS];
byte s_mver[NS];
bool cl[NP];                    /* ZooKeeper: this holder's claim znode {prefix}/held/NNNN-{nonce} */
bool s_cl[NP];
byte s_cltok[NP];

#define ALIVE(t) ((alive >> (t)) & 1)

#define SNAPSHOT() \
  s_fencev = fencev; s_alive = alive; \
  for (s : 0 .. NP - 1) { s_cl[s] = cl[s]; s_cltok[s] = tok[s] } \
  for (s : 0 .. NS - 1) { s_skey[s] = skey[s]; s_mk[s] = mk[s]; s_mver[s] = mver[s] }

/* A restore brings back keys, marks and revisions, and the leases / sessions as the snapshot
 * has them: one that ended since (its TTL passed while its holder was stopped) lives again, one
 * made since is unknown (its holder is told it expired); a slot key whose lease / session does
 * not exist is gone (etcd drops keys of unknown leases, ZooKeeper ephemerals of dead sessions). */
#define RESTORE_STORE() \
  fencev = s_fencev; alive = s_alive; \
  for (s : 0 .. NP - 1) { cl[s] = (s_cl[s] && s_cltok[s] == tok[s] && ALIVE(tok[s])) } \
  for (s : 0 .. NS - 1) { \
    skey[s] = (s_skey[s] != 0 && ALIVE(s_skey[s]) -> s_skey[s] : 0); mk[s] = s_mk[s]; mver[s] = s_mver[s] }

/* A write of the mark gives it a new mod revision (etcd) / version (ZooKeeper). etcd's
 * revision is store-wide, but a mark's mod revision is only ever compared for equality with
 * what its holder last wrote, so a per-key counter that a restore sets back, as it sets back
 * the store's revision, behaves the same (and keeps the state space finite). */
#define BUMP(s) mver[s]++
#if STORE == ZK
#define LATE_SESSION(p) ALIVE(tok[p])
#else
#define LATE_SESSION(p) 1
#endif

/* `polyflake lease fence` (fence.rs): the fence key set to a time past everything the
 * lost history may have issued (the ghost hiR); every taker's guard is at least its value
 * (fence::floor). The marks are not touched: a holder's compare does not see a fence. */
#define FENCE_STORE() \
  fencev = hiR

/* The end of a lease / session (its TTL or session timeout passed): its slot keys go. A
 * crashed holder's always ends; a live one's only as a fault (SIGSTOP or a partition past the
 * TTL; the server expires the session). */
#define EXPIRE(t) \
  alive = alive & ~(1 << (t)); \
  for (s : 0 .. NP - 1) { if :: tok[s] == (t) -> cl[s] = 0 :: else fi } \
  for (s : 0 .. NS - 1) { if :: skey[s] == (t) -> skey[s] = 0 :: else fi }

byte zomb[NP];                  /* the token of a process's generator that crashed */

#define EXPIRE_ZOMBIE(i) \
  :: atomic { zomb[i] != 0 -> EXPIRE(zomb[i]); \
       printf("MSC: ENV the lease / session of H%d's crashed generator expires\n", i); zomb[i] = 0; s = 0 }

#define ENV_STORE_FAULTS \
  EXPIRE_ZOMBIE(0) EXPIRE_ZOMBIE(1) EXPIRE_ZOMBIE(2) \
  ENV_EXPIRE_LIVE

#if !LIVE
#define ENV_EXPIRE_LIVE \
  :: atomic { budget > 0 && !expired -> expired = 1; budget--; select(i : 0 .. NH - 1); \
       if :: tok[i] != 0 && ALIVE(tok[i]) -> EXPIRE(tok[i]); \
             printf("MSC: ENV H%d stopped past its TTL: its lease / session expires\n", i) \
          :: else fi; i = 0; s = 0 }
#else
#define ENV_EXPIRE_LIVE
#endif
bool expired;

/* The compare of every write of R. etcd (etcd.rs::write_hwm): the slot key's value and lease
 * are ours AND the mark's mod revision is the one we last wrote (or it is absent).
 * ZooKeeper (zookeeper.rs::write_hwm): check_version(slot znode, 0), which any holder's slot
 * znode passes, AND check_version(our claim znode, 0) (R_CLAIM: a name only this holder
 * creates, with the slot znode in one multi) AND setData at the version we last wrote (or
 * create when there was none); the session must be alive. Without R_CHECK (mutation): no
 * compare at all. */
#ifndef R_CLAIM
#define R_CLAIM 1
#endif
#if R_CLAIM
#define CLAIM_OK(p) cl[p]
#else
#define CLAIM_OK(p) 1
#endif
#if !R_CHECK
#define WRITE_OK(p, s, v) 1
#elif STORE == ETCD
#define WRITE_OK(p, s, v) (skey[s] == tok[p] && mver[s] == (v))
#else
#define WRITE_OK(p, s, v) (skey[s] != 0 && CLAIM_OK(p) && ALIVE(tok[p]) && mver[s] == (v))
#endif

/* order.rs::guard_of: the mark when there is one, else a full reserve past now. */
#define RGUARD(p, s) (mk[s] != 0 -> mk[s] : CLK(p) + RES)

#define INHERITED(e) 0

proctype Holder(byte p) {
  byte g, r, c, fin, i, s;
end_loop:
  do
  /* generator/builder.rs::Builder::build -> runtime.rs::LeaseRuntime::acquire: a process starts a
   * generator: etcd.rs::open's lease grant / zookeeper.rs::open (the session). */
  :: atomic { tok[p] == 0 && p < NH && inc[p] == 0 -> incarnate(p); alive = alive | (1 << tok[p]) ; EAGER_ALL() }
  :: atomic { tok[p] == 0 && p < NH && inc[p] == 1 && restart -> restart = 0; incarnate(p);
       alive = alive | (1 << tok[p]) ; EAGER_ALL() }

  /* protocol.rs::take -> Store::create_slot: etcd.rs (the txn on create_revision == 0 that puts
   * the slot key and gets the mark) / zookeeper.rs (create the ephemeral slot znode, get_data the
   * mark). */
  :: atomic { tok[p] != 0 && slot[p] == NONE && !taking[p] && TAKE_OK && ALIVE(tok[p]) &&
              (skey[0] == 0 || skey[1] == 0) ->
       if :: skey[0] == 0 -> s = 0 :: skey[1] == 0 -> s = 1 fi;
       skey[s] = tok[p]; cl[p] = 1;
       g = max(RGUARD(p, s), fencev); hv[p] = mver[s]; taking[p] = 1; slot[p] = s; myf[p] = fencev;
       printf("MSC: H%d takes the slot key %d: mark %d (version %d), guard %d\n", p, s, mk[s], mver[s], g);
       s = 0 ; EAGER_ALL() }
  /* ... then write_hwm(R = max(guard, now) + reserve) before the first ID (Window::start);
   * a failed compare is "lost the slot while taking it": the generator is not made. Then the
   * fence is read again (protocol.rs::take, R_ROLLBACK): one that moved since the create's read
   * means the store was restored and fenced while the take was under way, and the guard read
   * before is void: the generator is not made either (found by this model:
   * verify/model/trails/no-rollback-detection.txt). */
  :: atomic { taking[p] ->
       taking[p] = 0; s = slot[p];
       r = max(g, CLK(p)) + RES;
       if
       :: !down && WRITE_OK(p, s, hv[p]) && !TAKE_FENCE_MOVED(p) ->
          mk[s] = r; BUMP(s); hv[p] = mver[s];
          durable(p, r);
          start(p, s, g, r, CLK(p))
       :: !down && WRITE_OK(p, s, hv[p]) && TAKE_FENCE_MOVED(p) ->
          mk[s] = r; BUMP(s); hv[p] = mver[s];
          durable(p, r);
          printf("MSC: H%d wrote its first R, then read a moved fence: the generator is not made\n", p);
          zomb[p] = tok[p];
          slot[p] = NONE; tok[p] = 0; hv[p] = 0; cl[p] = 0
       :: else ->
          printf("MSC: H%d could not write its first R: the generator is not made\n", p);
          zomb[p] = tok[p];                              /* its lease / session expires later */
          slot[p] = NONE; tok[p] = 0; hv[p] = 0; cl[p] = 0
       fi;
       g = 0; r = 0; s = 0 ; EAGER_ALL() }

  /* generator/engine.rs::next_monotonic / next_strict: issue within (floor, limit]. */

  /* etcd.rs::renew / zookeeper.rs::renew, the renew_tick arm: R = max(now + reserve, R),
   * write_hwm, then Window::publish; Ok(false) loses the lease; an error (store down, a
   * timeout) is a failed renewal. A write may time out and still land later (late_r).
   * Before the write, Holder::read_fence: the fence moved since the take loses the lease. */
  :: atomic { slot[p] != NONE && !taking[p] && !lost[p] && CLK(p) != tried[p] ->
       c = CLK(p); tried[p] = c; s = slot[p];
       r = max(c + RES, myR[p]);
#if !R_BEFORE
       lim[p] = CAPPED(r, c);                            /* mutation: published before written */
#endif
       if
       :: down -> printf("MSC: H%d renewal failed (store down)\n", p)
       :: !down && FENCE_MOVED(p) -> lose(p)             /* R_ROLLBACK */
       :: !down && !FENCE_MOVED(p) && WRITE_OK(p, s, hv[p]) ->
          mk[s] = r; BUMP(s); hv[p] = mver[s]; unsure[p] = 0;
          durable(p, r); chk[p] = c; publish(p, r);
          printf("MSC: H%d renewal: R %d written (version %d), limit %d\n", p, r, mver[s], lim[p])
#if LATE && !LIVE
       :: !down && !FENCE_MOVED(p) && !late_used && budget > 0 ->
          late_used = 1; budget--; late_r[p] = r; late_v[p] = hv[p];
#if STORE == ZK
          unsure[p] = r;
#endif
          printf("MSC: H%d renewal of R %d timed out (the write is still in flight)\n", p, r)
#endif
       :: !down && !FENCE_MOVED(p) && !WRITE_OK(p, s, hv[p]) ->
#if STORE == ZK
          /* zookeeper.rs::write_hwm: a mismatch after an unanswered write: adopt it if the
           * mark holds exactly what we wrote and the slot znode holds our token */
          if
          :: unsure[p] != 0 && mk[s] == unsure[p] && skey[s] == tok[p] && ALIVE(tok[p]) ->
             hv[p] = mver[s]; unsure[p] = 0;
             printf("MSC: H%d adopts its earlier write (version %d)\n", p, hv[p])
          :: else -> lose(p)
          fi
#else
          lose(p)
#endif
       fi;
       r = 0; c = 0; s = 0 ; EAGER_ALL() }

  /* The write that timed out lands now, its compare evaluated now (ZooKeeper: only while its
   * session lives); no fence read stands between its sending and its landing. */
  :: atomic { late_r[p] != 0 ->
       s = slot[p];
       if
       :: s != NONE && WRITE_OK(p, s, late_v[p]) && LATE_SESSION(p) -> mk[s] = late_r[p]; BUMP(s); durable(p, late_r[p]);
             printf("MSC: H%d's late write of R %d lands (version %d)\n", p, late_r[p], mver[s])
       :: else -> printf("MSC: H%d's late write fails its compare\n", p)
       fi;
       late_r[p] = 0; late_v[p] = 0; s = 0 ; EAGER_ALL() }

  /* etcd.rs::renew watch / keep-alive arms, zookeeper.rs::renew watch / session arms (and
   * zookeeper.rs::lost_by): the slot key deleted or put by someone else, the lease or session
   * ended: lost at once. */
  :: atomic { slot[p] != NONE && !taking[p] && !lost[p] && (skey[slot[p]] != tok[p] || !ALIVE(tok[p])) ->
       lose(p) ; EAGER_ALL() }

  /* mod.rs::LeaseRuntime::close (Release::Clean) then the end of etcd.rs::renew /
   * zookeeper.rs::renew: write the final R = min(max(last issued, guard), R) with the same
   * compare, then revoke the lease (etcd: deletes the slot key) / delete the slot znode at
   * version 0 (whoever's it is) and close the session. */
  :: atomic { ends > 0 && slot[p] != NONE && !taking[p] && !lost[p] && late_r[p] == 0 && p < NH ->
       ends--; restart = 1; s = slot[p];
       lim[p] = 0;
       fin = (any[p] > 0 -> max(lms[p], floor_[p]) : floor_[p]);
       fin = min(fin, myR[p]);
       if :: !down && WRITE_OK(p, s, hv[p]) -> mk[s] = fin; BUMP(s) :: else fi;   /* finish: no fence read */
       printf("MSC: H%d closes: final R %d\n", p, fin);
#if STORE == ETCD
       EXPIRE(tok[p]);
#else
       skey[s] = 0; EXPIRE(tok[p]);
#endif
       hv[p] = 0; unsure[p] = 0; cl[p] = 0; forget(p); fin = 0; s = 0 ; EAGER_ALL() }

  /* A lost lease: the generator is dropped; its lease is revoked / session closed. */
  :: atomic { lost[p] && late_r[p] == 0 ->
       printf("MSC: H%d drops its lost generator\n", p);
       EXPIRE(tok[p]); hv[p] = 0; unsure[p] = 0; cl[p] = 0; forget(p); s = 0 ; EAGER_ALL() }

#if !LIVE
  /* A crash: the lease / session lives on until its TTL passes (Env expires it). */
  :: atomic { ends > 0 && tok[p] != 0 && !taking[p] && late_r[p] == 0 && p < NH ->
       ends--; restart = 1;
       printf("MSC: H%d crashes\n", p);
       if :: slot[p] != NONE -> dead_lim[slot[p]] = max(dead_lim[slot[p]], lim[p]) :: else fi;
       zomb[p] = tok[p]; hv[p] = 0; unsure[p] = 0; cl[p] = 0; forget(p) ; EAGER_ALL() }
#endif
  od
}

init {
  byte i;
  atomic {
    for (i : 0 .. NP - 1) { off[i] = 1; slot[i] = NONE; lseq[i] = SEQ - 1 }
    for (i : 0 .. NH - 1) { incarnate(i); ALIVE_NEW(i); run Holder(i) }
  }
}
