/*
 * fork() and the process-wide registry of node ids (core/src/registry.rs, core/src/fork.rs,
 * core/src/generator/), included by lease.pml when STORE == 0. Static node id 2.
 *
 * Process 0 (the parent) makes a static generator (registry::claim), issues, may close it
 * and make another (the successor continues after the registry's last state word), and may
 * fork. Process 1 (the child) inherits the parent's generator, which refuses with
 * UsedAfterFork (generator/engine.rs::after_fork), and may make its own static generator with the
 * same node id: registry::claim must refuse it while the parent's is live. The code holds a
 * static id host-wide (registry.rs: an abstract Unix socket; R_FORKREG); before that hold it
 * checked only the child's copy of the table, whose entry carries the parent's fork
 * generation, and let the child in (the mutation R_FORKREG=0).
 */
#define NODE 2

/* The host-wide hold: which process holds the id (process + 1), 0 when none. */
byte reg_owner;
/* Each process's own copy of the table (live, generation, last state). */
bool tab_live[2];
byte tab_gen[2];
byte tab_ms[2];
byte tab_seq[2];
byte gen[2];                    /* fork.rs::FORK_GENERATION of each process */
bool has_gen[2];                /* the process has a live generator of its own */
bool child_alive;

/* registry::claim. With R_FORKREG (the code): the host-wide hold (an abstract socket that one
 * live process holds) refuses an id another live process holds, the parent included; the
 * process's own table gives the last state word issued under the id in this process, and
 * generator/builder.rs counts the millisecond the id was taken in as spent (the previous holder's last
 * state died with it). Without it (the earlier code): only the process's own table. */
inline claim(p) {
#if R_FORKREG
  reg_owner == 0 ->
    reg_owner = p + 1; tab_live[p] = 1; tab_gen[p] = gen[p];
    if :: !R_HANDOVER || tab_ms[p] > CLK(p) || (tab_ms[p] == CLK(p) && tab_seq[p] == SEQ - 1) ->
            lms[p] = tab_ms[p]; lseq[p] = tab_seq[p]
       :: else -> lms[p] = CLK(p); lseq[p] = SEQ - 1
    fi
#else
  !(tab_live[p] && tab_gen[p] == gen[p]) ->
    tab_live[p] = 1; tab_gen[p] = gen[p]; lms[p] = tab_ms[p]; lseq[p] = tab_seq[p]
#endif
}

/* Claim::release: record the last state word in the process's table, free the id. */
inline release(p) {
#if R_FORKREG
  if :: reg_owner == p + 1 -> reg_owner = 0 :: else fi;
#endif
  if :: tab_gen[p] == gen[p] -> tab_live[p] = 0 :: else fi;
  if :: lms[p] > tab_ms[p] || (lms[p] == tab_ms[p] && lseq[p] > tab_seq[p]) -> tab_ms[p] = lms[p]; tab_seq[p] = lseq[p]
     :: else fi
}

proctype Proc(byte p) {
  byte made;
end_loop:
  do
  /* Generator::builder(2).build(): registry::claim (generator/builder.rs, NodeIdInUse otherwise). */
  :: atomic { !has_gen[p] && made < 2 -> claim(p); has_gen[p] = 1; made++; lim[p] = MS - 1;
       printf("MSC: H%d makes a static generator for node 2 (resumes after ms %d seq %d)\n", p, lms[p], lseq[p]) }
  /* generator/engine.rs::next_strict (no lease: floor -1, limit the layout's end). */
  :: atomic { has_gen[p] && CAN_ISSUE(p) -> issue(p, NODE) }
  /* Generator::close: Claim::release with the last state word. */
  :: atomic { has_gen[p] -> has_gen[p] = 0; lim[p] = 0; release(p);
       printf("MSC: H%d closes its generator\n", p) }
  /* fork(): fork.rs::on_fork_child bumps the child's generation; the child has a copy of the
   * parent's memory (its generator, whose next call refuses with UsedAfterFork: it is not
   * modelled as issuing), and of the process's table. */
  :: atomic { p == 0 && !child_alive -> child_alive = 1;
       gen[1] = gen[0] + 1;
       tab_live[1] = tab_live[0]; tab_gen[1] = tab_gen[0]; tab_ms[1] = tab_ms[0]; tab_seq[1] = tab_seq[0];
       printf("MSC: H0 forks H1 (its generator in H1 refuses with UsedAfterFork)\n");
       run Proc(1) }
  od
}

init {
  atomic { off[0] = 1; off[1] = 1; lseq[0] = SEQ - 1; lseq[1] = SEQ - 1; run Proc(0) }
}
