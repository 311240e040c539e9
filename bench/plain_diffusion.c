/* A plain solver of Diffusion v1, written the simple way, as the yardstick of sowsolve's own
 * solve (bench/bench_plain_c.py compiles and times both in one run).
 *
 * Every board of 2n pits holding 0..5 stones each (6^(2n) boards, the index a base-6 number
 * with pit 0 -- the top row's left pit -- as its lowest digit) is solved for A to move, one
 * 16-bit record each in sowsolve's win/loss layout (outcome in the low 2 bits, remoteness
 * above).  A position with B to move is the 180-degree turn of one with A to move (the pit
 * sequence reversed), so a child is read at its turned index.  Positions are solved by a
 * depth-first walk with an explicit stack from every index in turn, shared by two OpenMP
 * threads (a position solved by both gets the same record twice); RULES.md's potential falls
 * along every move, so the walk ends.  No table is written: it prints the start's record and a
 * checksum of all records.
 *
 * Measured so far: correct (tests/test_plain_c.py), but slow on the standard board: a run of
 * 2x6 with 4 stones had not ended after 12 minutes on two cores, where every child is read at
 * random from 4.35 GB of records, twice.  A sweep in order of potential would read them in
 * order; until then this is no fair yardstick of the standard solve.
 *
 *     cc -O2 -fopenmp plain_diffusion.c -o plain_diffusion
 *     ./plain_diffusion COLS STONES [RECORDS]     (RECORDS: write the records there, raw)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAXP 16
#define MAX_DEPTH 20000     /* deeper than any game of up to 8 columns: the potential falls */
#define LOSS 1u
#define WIN 3u
#define MAKE(outcome, rem) ((uint16_t)(((rem) << 2) | (outcome)))

static int n, npits;
static int slots[MAXP][5];      /* target pit of each slot, -1 for a store */
static int owner[MAXP];         /* 0: block A (left half), 1: block B */
static uint64_t pow6[MAXP + 1];
static uint16_t *record;

static void decode(uint64_t index, int *board) {
    for (int p = 0; p < npits; p++) { board[p] = (int)(index % 6); index /= 6; }
}

static uint64_t index_of(const int *board) {
    uint64_t index = 0;
    for (int p = 0; p < npits; p++) index += board[p] * pow6[p];
    return index;
}

static uint64_t turned_index(const int *board) {
    uint64_t index = 0;
    for (int p = 0; p < npits; p++) index += board[npits - 1 - p] * pow6[p];
    return index;
}

/* The outcome for A to move if a block is empty (its owner wins), else 0. */
static unsigned final_outcome(const int *board) {
    int stones[2] = {0, 0};
    for (int p = 0; p < npits; p++) stones[owner[p]] += board[p];
    if (stones[0] == 0) return WIN;
    if (stones[1] == 0) return LOSS;
    return 0;
}

/* The turned index of the child after scooping `pit` (non-empty). */
static uint64_t child_of(const int *board, int pit) {
    int after[MAXP];
    for (int p = 0; p < npits; p++) after[p] = board[p];
    after[pit] = 0;
    for (int j = 0; j < board[pit]; j++) {
        int q = slots[pit][j];
        if (q >= 0 && after[q] < 5) after[q]++;
    }
    return turned_index(after);
}

typedef struct { uint64_t index; int board[MAXP]; int next; } Frame;

static void solve_from(uint64_t root, Frame *stack) {
    int depth = 0;
    if (__atomic_load_n(&record[root], __ATOMIC_RELAXED)) return;
    stack[0].index = root;
    decode(root, stack[0].board);
    stack[0].next = 0;
    while (depth >= 0) {
        Frame *f = &stack[depth];
        unsigned outcome = final_outcome(f->board);
        if (outcome) {
            __atomic_store_n(&record[f->index], MAKE(outcome, 0), __ATOMIC_RELAXED);
            depth--;
            continue;
        }
        /* descend into the first unsolved child, if any */
        for (; f->next < npits; f->next++) {
            if (f->board[f->next] == 0) continue;
            uint64_t c = child_of(f->board, f->next);
            if (!__atomic_load_n(&record[c], __ATOMIC_RELAXED)) {
                if (depth + 1 == MAX_DEPTH) { fprintf(stderr, "plain_diffusion: too deep\n"); exit(1); }
                Frame *g = &stack[++depth];
                g->index = c;
                decode(c, g->board);
                g->next = 0;
                break;
            }
        }
        if (f->next < npits) continue;
        /* every child solved: a win if one loses for its mover (the fastest), else a loss (the slowest) */
        unsigned win_in = 0xFFFF, lose_in = 0;
        for (int p = 0; p < npits; p++) {
            if (f->board[p] == 0) continue;
            uint16_t r = __atomic_load_n(&record[child_of(f->board, p)], __ATOMIC_RELAXED);
            unsigned rem = r >> 2;
            if ((r & 3) == LOSS) { if (rem < win_in) win_in = rem; }
            else if (rem > lose_in) lose_in = rem;
        }
        __atomic_store_n(&record[f->index],
                         win_in != 0xFFFF ? MAKE(WIN, win_in + 1) : MAKE(LOSS, lose_in + 1),
                         __ATOMIC_RELAXED);
        depth--;
    }
}

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) { fprintf(stderr, "usage: plain_diffusion COLS STONES [RECORDS]\n"); return 2; }
    n = atoi(argv[1]);
    int stones = atoi(argv[2]);
    if (n < 2 || 2 * n > MAXP || n % 2 || stones < 1 || stones > 5) {
        fprintf(stderr, "plain_diffusion: COLS even from 2 to %d, STONES from 1 to 5\n", MAXP / 2);
        return 2;
    }
    npits = 2 * n;
    /* pits: top row left to right (0..n-1), bottom row left to right (n..2n-1) */
    static const int bottom[5][2] = {{0, 1}, {-1, 1}, {-1, 0}, {-1, -1}, {0, -1}};   /* E NE N NW W */
    static const int top[5][2] = {{0, -1}, {1, -1}, {1, 0}, {1, 1}, {0, 1}};        /* W SW S SE E */
    for (int p = 0; p < npits; p++) {
        int row = p < n ? 0 : 1, col = p < n ? p : p - n;
        owner[p] = col < n / 2 ? 0 : 1;
        for (int j = 0; j < 5; j++) {
            const int *step = row ? bottom[j] : top[j];
            int r = row + step[0], c = col + step[1];
            slots[p][j] = (r < 0 || r > 1 || c < 0 || c >= n) ? -1 : r * n + c;
        }
    }
    pow6[0] = 1;
    for (int p = 1; p <= npits; p++) pow6[p] = 6 * pow6[p - 1];
    uint64_t total = pow6[npits];
    record = calloc(total, sizeof(uint16_t));
    if (!record) { fprintf(stderr, "plain_diffusion: out of memory\n"); return 1; }
    #pragma omp parallel
    {
        Frame *stack = malloc(sizeof(Frame) * MAX_DEPTH);
        #pragma omp for schedule(dynamic, 4096)
        for (int64_t i = 0; i < (int64_t)total; i++) solve_from((uint64_t)i, stack);
        free(stack);
    }
    int start[MAXP];
    for (int p = 0; p < npits; p++) start[p] = stones;
    uint64_t start_index = index_of(start), checksum = 0;
    for (uint64_t i = 0; i < total; i++) checksum = checksum * 1000003u + record[i];
    printf("{\"positions\": %llu, \"start_record\": %u, \"checksum\": %llu}\n",
           (unsigned long long)total, record[start_index], (unsigned long long)checksum);
    if (argc == 4) {        /* the records, for a test to compare with a table */
        FILE *out = fopen(argv[3], "wb");
        if (!out || fwrite(record, sizeof(uint16_t), total, out) != total || fclose(out)) {
            fprintf(stderr, "plain_diffusion: cannot write %s\n", argv[3]);
            return 1;
        }
    }
    free(record);
    return 0;
}
