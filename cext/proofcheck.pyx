# cython: language_level=3
"""Checking a proof with a game's compiled move generator, apart from the search that made it.

A proof of a win (or loss) for the side to move is a list of the winner's positions, each with
the child it moves to (sorted packed canonical positions and their chosen children).  The check
replays it from the start: at each of the winner's positions the proof must list it and its
chosen child must be one of the position's children; at each of the loser's positions every
child is followed; and every line must end in a final position the winner has won.  It uses only
the game's `expand_key` (the move generator the perft vectors and the tests tie to the reference
rules), not the proof search's code or table, and holds the positions it has checked, each with
its role (keyset.pxd), in a hash set of 9 bytes a slot (at most three quarters of them used).
"""
from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport int64_t, uint8_t, uint16_t, uint64_t

import numpy as np
cimport numpy as cnp

from kernel_api cimport (CONTROL_FLUSH, REC_OUTCOME, REC_WIN, Control, GameKernel,
                         SOWSOLVE_KERNEL_CAPSULE, control_of, ctl_add, ctl_stopped, sorted_find)
from keyset cimport Seen, Todo, WALK_NO_MEMORY, push, seen_add, seen_close, seen_open, todo_close, todo_open

cnp.import_array()

cdef enum:
    MAX_CHILDREN = 512
    OK = 0
    NO_MOVE = 1          # a position of the winner's the proof does not list
    NOT_A_CHILD = 2      # the proof's move there is not a legal move
    NOT_WON = 3          # a line ends where the winner has not won
    BAD_KEY = 4          # the game refused a packed position (a forged key)
    STOPPED = 5
    NO_MEMORY = WALK_NO_MEMORY

#: what each failure code means (the check's caller names the position)
FAILURES = {NO_MOVE: "the proof gives no move for the winner in",
            NOT_A_CHILD: "the proof's move is not a legal move in",
            NOT_WON: "the proof reaches a final position its winner does not win:",
            BAD_KEY: "the proof holds a packed position the game refuses:"}


cdef int replay(const GameKernel *game, uint64_t root, uint8_t root_winner_to_move,
                const uint64_t *keys, const uint64_t *chosen, int64_t count, uint8_t *reached,
                Seen *seen, Todo *todo, Control *ctl, int64_t *checked, uint64_t *failed) noexcept nogil:
    cdef uint64_t child[MAX_CHILDREN]
    cdef uint64_t key, wanted
    cdef uint16_t record
    cdef uint8_t winner_to_move
    cdef int n, i, added, err
    cdef int64_t at, unreported = 0
    err = push(todo, root, root_winner_to_move)
    while err == OK and todo.n > 0:
        todo.n -= 1
        key = todo.keys[todo.n]
        winner_to_move = todo.roles[todo.n]
        added = seen_add(seen, key, winner_to_move)
        if added < 0:
            return NO_MEMORY
        if added == 0:
            continue
        checked[0] += 1
        unreported += 1
        if unreported == CONTROL_FLUSH:
            ctl_add(ctl, unreported)
            unreported = 0
            if ctl_stopped(ctl):
                return STOPPED
        failed[0] = key
        record = 0
        n = game.expand_key(game.ctx, key, child, NULL, &record)
        if n < 0:
            return BAD_KEY
        if n == 0:
            # a final position: the side to move has won or lost there
            if (REC_OUTCOME(record) == REC_WIN) != (winner_to_move == 1):
                return NOT_WON
            continue
        if not winner_to_move:
            for i in range(n):
                err = push(todo, child[i], 1)
                if err != OK:
                    break
            continue
        at = sorted_find(keys, count, key)
        if at < 0:
            return NO_MOVE
        reached[at] = 1
        wanted = chosen[at]
        for i in range(n):
            if child[i] == wanted:
                break
        else:
            return NOT_A_CHILD
        err = push(todo, wanted, 0)
    ctl_add(ctl, unreported)
    return err


def check_proof(capsule, uint64_t root, bint winner_to_move, cnp.uint64_t[::1] keys,
                cnp.uint64_t[::1] chosen, int64_t[::1] control=None):
    """Replay a proof from `root` (its side to move the winner when `winner_to_move`): returns
    (positions checked, failure code or 0, the packed position where it failed, which of the
    proof's positions the replay reached: a bool array).  `keys` must be sorted (the caller
    checks); `chosen` holds the child chosen at each."""
    cdef const GameKernel *game
    cdef Control spare
    cdef Control *ctl = control_of(control, &spare)
    cdef Seen seen
    cdef Todo todo
    cdef int64_t checked = 0
    cdef uint64_t failed = 0
    cdef int code
    cdef cnp.uint8_t[::1] reached = np.zeros(keys.shape[0], dtype=np.uint8)
    if not PyCapsule_IsValid(capsule, SOWSOLVE_KERNEL_CAPSULE):
        raise TypeError("expected a game kernel capsule")
    game = <const GameKernel *>PyCapsule_GetPointer(capsule, SOWSOLVE_KERNEL_CAPSULE)
    if game.expand_key == NULL:
        raise ValueError("this game's kernel does not offer packed positions")
    if game.max_children > MAX_CHILDREN:
        raise ValueError(f"{game.max_children} children per position is more than {MAX_CHILDREN}")
    if keys.shape[0] != chosen.shape[0]:
        raise ValueError("a proof's positions and choices differ in number")
    if root == 0:
        raise ValueError("0 is not a packed position")
    opened = (seen_open(&seen), todo_open(&todo))      # both, so that both can be closed
    try:
        if opened != (0, 0):
            raise MemoryError("out of memory for checking the proof")
        with nogil:
            code = replay(game, root, winner_to_move, &keys[0] if keys.shape[0] else NULL,
                          &chosen[0] if chosen.shape[0] else NULL, keys.shape[0],
                          &reached[0] if keys.shape[0] else NULL, &seen, &todo, ctl, &checked, &failed)
    finally:
        seen_close(&seen)
        todo_close(&todo)
    if code == STOPPED:
        raise KeyboardInterrupt
    if code == NO_MEMORY:
        raise MemoryError(f"out of memory for checking the proof ({checked:,} positions checked)")
    return checked, code, failed if code else 0, np.asarray(reached).astype(bool)
