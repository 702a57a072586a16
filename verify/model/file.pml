/*
 * The file lease (core/src/lease/file.rs), included by lease.pml when STORE == 1.
 *
 * The store: per slot, the file the path `slot-NNNN` names (an inode number; 0: no file),
 * the flock on it (one holder; the kernel drops it when the last descriptor of the open file
 * closes: a crash, a close), and the record in it (complete or not, R, the holder token, the
 * mtime). A holder keeps the inode it opened and locked; its writes go to that inode, which
 * after a delete is no longer the one the path names.
 */

byte flk[NS];                   /* holder index + 1 with the flock on the path's inode; 0: none */
byte ino[NS];                   /* the inode the path names (0: no file) */
byte nino;                      /* inode numbers handed out */
bool rok[NS];                   /* the record is complete (record.rs::parse_slot) */
byte rR[NS];                    /* its high_water_ms */
byte rtok[NS];                  /* its holder= token */
byte rT[NS];                    /* the file's mtime */
byte hino[NP];                  /* the inode this holder has open and locked */
bool inherited[NP];             /* a forked child's generator still on its parent's session */
bool fseen[NP];                 /* a take has read the fence (myf), no slot file locked yet */

/* The snapshot a restore brings back (a backup of the directory's files, `polyflake-fence`
 * among them: lease.pml's s_fencev). */
bool s_rok[NS];
byte s_rR[NS];
byte s_rtok[NS];
byte s_rT[NS];

#define SNAPSHOT() \
  s_fencev = fencev; \
  for (s : 0 .. NS - 1) { s_rok[s] = rok[s]; s_rR[s] = rR[s]; s_rtok[s] = rtok[s]; s_rT[s] = rT[s] }

/* A restore writes the old records back in place (a file that was deleted comes back as a new
 * file, unlocked). */
#define RESTORE_STORE() \
  fencev = s_fencev; \
  for (s : 0 .. NS - 1) { \
    if :: ino[s] == 0 && s_rT[s] != 0 -> nino++; ino[s] = nino; flk[s] = 0 :: else fi; \
    if :: ino[s] != 0 -> rok[s] = s_rok[s]; rR[s] = s_rR[s]; rtok[s] = s_rtok[s]; rT[s] = s_rT[s] \
       :: else fi }

/* `polyflake lease fence` (file/fencing.rs::fence_file_lease): `polyflake-fence` set to a time
 * past everything the lost history may have issued (the ghost hiR); every taker's guard is at
 * least its value (fence::floor). The records are not touched: a holder's check does not see a
 * fence. */
#define FENCE_STORE() \
  fencev = hiR

/* The file's faults: deleted (a cleaner, rm, the directory removed) or overwritten in place
 * (emptied, damaged): core/tests/quiet_faults.rs replays both. */
#if !LIVE && DELETE_FILE
#define ENV_STORE_FAULTS \
  :: atomic { budget > 0 && !deleted -> deleted = 1; budget--; \
       select(s : 0 .. NS - 1); ino[s] = 0; flk[s] = 0; rok[s] = 0; rR[s] = 0; rtok[s] = 0; rT[s] = 0; \
       printf("MSC: ENV slot file %d deleted\n", s); s = 0 } \
  :: atomic { budget > 0 && !deleted -> deleted = 1; budget--; \
       select(s : 0 .. NS - 1); if :: ino[s] != 0 -> rok[s] = 0; rT[s] = CLK(0) :: else fi; \
       printf("MSC: ENV slot file %d overwritten (record damaged)\n", s); s = 0 }
#else
#define ENV_STORE_FAULTS
#endif

/* The kernel drops our flock (only if the path still names the inode we locked; a lock on a
 * deleted file is on an inode nobody can open any more). */
inline unlock(p) {
  if :: slot[p] != NONE && hino[p] == ino[slot[p]] && flk[slot[p]] == p + 1 -> flk[slot[p]] = 0
     :: else fi;
  hino[p] = 0
}

/* file.rs::acquire (+ take_file, record_guard and order.rs::guard_of): lock a slot file
 * (creating it if missing) whose path still names it, read the record: guard = its R when
 * complete, else a full reserve past max(mtime, now); never below the fence the take read
 * (fence::floor). Slot order (slot_order) is a preference only: the model tries the slots in
 * any order. */
inline file_lock(p, s) {
  d_step {
    if :: ino[s] == 0 -> nino++; ino[s] = nino; rok[s] = 0; rR[s] = 0; rtok[s] = 0; rT[s] = CLK(p)
       :: else fi;
    flk[s] = p + 1; hino[p] = ino[s]; slot[p] = s; taking[p] = 1;
    c = CLK(p);                                          /* checked: the clock before the lock */
    for (i : 0 .. NP - 1) { if :: i != p && slot[i] == s && tok[i] != 0 -> pl[p] = pl[p] | (1 << i) :: else fi }
    i = 0;
    g = max((rok[s] -> rR[s] : max(rT[s], CLK(p)) + RES), myf[p]);
    printf("MSC: H%d locks slot file %d: record R %d (complete %d), fence %d read before: guard %d\n", p, s, rR[s], rok[s], myf[p], g)
  }
}

/* ... then R = max(guard, now) + reserve, written (SlotFile::write: pwrite + fdatasync) to the
 * inode it locked before the first ID; then the fence read again (R_TAKEFENCE): one that moved
 * since the take's first read means the directory was restored and fenced while the take was
 * under way, and the guard read before is void: the generator is not made (its slot file is
 * unlocked). Else Session::start and Window::start. */
inline file_write(p) {
  d_step {
    taking[p] = 0;
    r = max(g, CLK(p)) + RES;
    if :: hino[p] == ino[slot[p]] -> rok[slot[p]] = 1; rR[slot[p]] = r; rtok[slot[p]] = tok[p]; rT[slot[p]] = CLK(p)
       :: else fi;                                       /* a deleted file's inode: unseen */
    durable(p, r);
    if
    :: !TAKE_FENCE_MOVED(p) ->
       start(p, slot[p], g, r, c);
       pl[p] = 0;
       inherited[p] = 0
    :: else ->
       printf("MSC: H%d wrote its first R %d, then read a moved fence: the generator is not made\n", p, r);
       unlock(p); forget(p); pl[p] = 0
    fi;
    g = 0; r = 0; c = 0
  }
}

#define INHERITED(e) inherited[e]

proctype Holder(byte p) {
  byte g, r, c, fin, i;
end_loop:
  do
  /* generator/builder.rs::Builder::build -> runtime.rs::LeaseRuntime::acquire: a process starts a
   * generator (the first, or a restart after a crash or close); the take steps follow. */
  :: atomic { tok[p] == 0 && p < NH && inc[p] == 0 -> incarnate(p) ; EAGER_ALL() }
  :: atomic { tok[p] == 0 && p < NH && inc[p] == 1 && restart -> restart = 0; incarnate(p) ; EAGER_ALL() }

  /* file.rs::acquire: read the fence (read_file_fence), once, before any slot file is locked;
   * then lock a free slot file and read its record; then write R and read the fence again.
   * Three steps where the environment can change the directory under a take (a restore and
   * its fence, a deleted or overwritten file); elsewhere nothing can come between them that
   * changes what the take reads, and they are one step (the state space stays that of the
   * configurations' earlier runs). */
#if RESTORE
  :: atomic { tok[p] != 0 && slot[p] == NONE && !taking[p] && !fseen[p] && TAKE_OK ->
       myf[p] = fencev; fseen[p] = 1; printf("MSC: H%d reads the fence: %d\n", p, fencev) }
#define FENCE_READ(p) fseen[p]
#else
#define FENCE_READ(p) (tok[p] != 0 && !taking[p])  /* no restore: the fence stays 0 */
#endif
#if RESTORE || DELETE_FILE
#define WRITE_NOW(p) skip
  :: atomic { taking[p] && !down -> file_write(p) ; EAGER_ALL() }
  :: atomic { taking[p] && down -> printf("MSC: H%d cannot write its first R (store down): the generator is not made\n", p);
       taking[p] = 0; g = 0; c = 0; pl[p] = 0; unlock(p); forget(p) ; EAGER_ALL() }
#else
#define WRITE_NOW(p) file_write(p)
#endif
  :: atomic { FENCE_READ(p) && slot[p] == NONE && TAKE_OK && flk[0] == 0 -> fseen[p] = 0; file_lock(p, 0); WRITE_NOW(p) ; EAGER_ALL() }
  :: atomic { FENCE_READ(p) && slot[p] == NONE && TAKE_OK && flk[1] == 0 -> fseen[p] = 0; file_lock(p, 1); WRITE_NOW(p) ; EAGER_ALL() }

  /* generator/engine.rs::next_monotonic / next_strict: issue within (floor, limit]. */

  /* file.rs::SlotFile::renew, first half: SlotFile::check_held (same dev/inode, link count
   * above 0, our holder token); the clock was read just before (spawn_renewal). */
  :: atomic { slot[p] != NONE && !taking[p] && !lost[p] && !pend[p] && !inherited[p] && CLK(p) != tried[p] ->
       c = CLK(p); tried[p] = c;
       if
       :: down -> printf("MSC: H%d renewal failed (store down)\n", p)   /* Check::Failed */
       :: !down ->                                       /* no rollback detection in file.rs */
#if R_CHECK
          if
          :: hino[p] == ino[slot[p]] && ino[slot[p]] != 0 && rok[slot[p]] && rtok[slot[p]] == tok[p] ->
             pend[p] = 1; printf("MSC: H%d renewal: check_held ok at clock %d\n", p, c)
          :: else -> lose(p)                             /* Check::Lost: LeaseLost */
          fi
#else
          pend[p] = 1; printf("MSC: H%d renewal: NO check (mutation)\n", p)
#endif
       fi;
#if !R_BEFORE
       /* mutation: the limit published before R is written */
       if :: pend[p] -> lim[p] = CAPPED(max(c + RES, myR[p]), c)
          :: else fi
#endif
     ; EAGER_ALL() }
  /* file.rs::SlotFile::renew, second half: R = max(now + reserve, R), SlotFile::write (pwrite
   * at offset 0 + fdatasync), then Window::publish. A SIGSTOP may fall between the halves. */
  :: atomic { pend[p] ->
       pend[p] = 0;
       r = max(c + RES, myR[p]);
       if
       :: down -> printf("MSC: H%d renewal write failed (store down)\n", p)
       :: else ->
          if :: hino[p] == ino[slot[p]] -> rok[slot[p]] = 1; rR[slot[p]] = r; rtok[slot[p]] = tok[p]; rT[slot[p]] = CLK(p)
             :: else fi;                                 /* a deleted file's inode: unseen */
          durable(p, r);
          chk[p] = c;
          publish(p, r);
          printf("MSC: H%d renewal: R %d written (file named: %d), limit %d\n", p, r, hino[p] == ino[slot[p]], lim[p])
       fi;
       r = 0; c = 0 ; EAGER_ALL() }

  /* runtime.rs::LeaseRuntime::close (Release::Clean) + file.rs::SlotFile::finish + Drop for
   * SlotFile: shut the window, write R = min(max(last issued, guard), R) if the slot is still
   * ours, unlock. */
  :: atomic { ends > 0 && slot[p] != NONE && !taking[p] && !lost[p] && !pend[p] && !inherited[p] && p < NH ->
       ends--; restart = 1;
       lim[p] = 0;
       fin = (any[p] > 0 -> max(lms[p], floor_[p]) : floor_[p]);
       fin = min(fin, myR[p]);
       if
       :: !down && hino[p] == ino[slot[p]] && rok[slot[p]] && rtok[slot[p]] == tok[p] ->
          rR[slot[p]] = fin; rT[slot[p]] = CLK(p)
       :: else fi;
       printf("MSC: H%d closes: final R %d, unlocks\n", p, fin);
       unlock(p); forget(p); fin = 0 ; EAGER_ALL() }

  /* A lost lease: the generator is dropped (its calls refuse with LeaseLost), unlocking. */
  :: atomic { lost[p] -> printf("MSC: H%d drops its lost generator\n", p); unlock(p); forget(p) ; EAGER_ALL() }

#if !LIVE
  /* A crash (SIGKILL, OOM): the kernel closes the descriptors, the flock goes; R stays. */
  :: atomic { ends > 0 && tok[p] != 0 && p < NH -> ends--; restart = 1; printf("MSC: H%d crashes\n", p);
       if :: slot[p] != NONE -> dead_lim[slot[p]] = max(dead_lim[slot[p]], lim[p]) :: else fi; unlock(p); forget(p);
       taking[p] = 0; fseen[p] = 0; g = 0; c = 0; pl[p] = 0 ; EAGER_ALL() }
#endif

#if FORK && !LIVE
  /* fork() of a lease holder: fork.rs::on_fork_child bumps the generation and closes the
   * child's copies of the lease descriptors after fstat matches (the parent's flock stays:
   * it belongs to the open file description the parent still holds). The child's generator
   * keeps the parent's window and state word until it re-leases. */
  :: atomic { p == 0 && budget > 0 && !forked && slot[p] != NONE && !taking[p] && !lost[p] && !pend[p] ->
       forked = 1; budget--;
       slot[NH] = slot[p]; lms[NH] = lms[p]; lseq[NH] = lseq[p];
       lim[NH] = 0;                                      /* check_fork: relet first */
       inherited[NH] = 1;
       printf("MSC: H%d forks: child H%d inherits slot %d\n", p, NH, slot[p]);
       run Holder(NH) ; EAGER_ALL() }
#endif

  /* generator/engine.rs::after_fork -> runtime.rs::LeaseRuntime::relet_after_fork: let go of the
   * parent's session by forgetting it (runtime.rs::abandon: the fork handler already closed the
   * child's copies, never unlocking them), suspend, take a fresh slot with a new holder token. */
  :: atomic { inherited[p] ->
#if !R_FSTAT
       /* mutation: the parent's session is let go through its stored descriptor number
        * (unlock + close, as Drop for SlotFile does), which in the child still names the
        * parent's open file description: the PARENT's flock is dropped under it. */
       if :: flk[slot[p]] == 1 && hino[0] == ino[slot[p]] -> flk[slot[p]] = 0 :: else fi;
#endif
       printf("MSC: H%d (forked child) lets go of the parent's session, re-leases\n", p);
       slot[p] = NONE; inherited[p] = 0; inc[p]++; tok[p] = p + 1 + NP * inc[p] ; EAGER_ALL() }
  od
}

init {
  byte i;
  atomic {
    for (i : 0 .. NP - 1) { off[i] = 1; slot[i] = NONE; lseq[i] = SEQ - 1 }
    for (i : 0 .. NH - 1) { incarnate(i); ALIVE_NEW(i); run Holder(i) }
  }
}
