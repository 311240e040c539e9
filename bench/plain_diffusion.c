/* A second plain solver of Diffusion v1, written the simple way.  It is NOT the yardstick of
 * sowsolve's speed (bench/bench_plain_c.py times sowsolve against the yardstick, a faster plain
 * C solver kept outside the project; this one takes about six times as long on the standard
 * board): it is kept as an independent check of sowsolve's records (tests/test_plain_c.py
 * compares every record of 2x4 with 2 stones per pit).
 *
 * Every board of 2n pits holding 0..5 stones each (6^(2n) boards, the index a base-6 number
 * with pit 0 -- the top row's left pit -- as its lowest digit) is solved for A to move, one
 * 16-bit record each in sowsolve's win/loss layout (outcome in the low 2 bits, remoteness
 * above).  A position with B to move is the 180-degree turn of one with A to move (the pit
 * sequence reversed), so a child is read at its turned index.
 *
 * Order: RULES.md's potential, the sum of w[p] * stones over the pits, falls along every move
 * when a * w[p] > the sum of w over the first a slots of p for every pit p and every a in 1..5.
 * The least integer weights with that property are found by raising each weight to what its
 * inequalities need until nothing changes (n = 6: 49 76 81 82 83 84 from the left, mirrored;
 * the rule sheet's 97 151 ... is another solution).  Every board is counted by potential, the
 * indices sorted by it (a counting sort, 4 bytes per board), and the boards solved level by
 * level upwards: the children of a level lie in lower levels, so the boards of one level are
 * independent and split evenly between the OpenMP threads.  No table is written: it prints the
 * start's record and a checksum of all records.
 *
 *     cc -O2 -fopenmp plain_diffusion.c -o plain_diffusion
 *     ./plain_diffusion COLS STONES [RECORDS]     (RECORDS: write the records there, raw)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAXP 16
#define LOSS 1u
#define WIN 3u
#define MAKE(outcome, rem) ((uint16_t)(((rem) << 2) | (outcome)))

static int n, npits;
static int slots[MAXP][5];      /* target pit of each slot, -1 for a store */
static int owner[MAXP];         /* 0: block A (left half), 1: block B */
static int weight[MAXP];        /* the potential's weight of each pit */
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

static int potential(const int *board) {
    int sum = 0;
    for (int p = 0; p < npits; p++) sum += weight[p] * board[p];
    return sum;
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

/* The record of a board whose children are all solved. */
static uint16_t solve_one(uint64_t index) {
    int board[MAXP];
    decode(index, board);
    unsigned outcome = final_outcome(board);
    if (outcome) return MAKE(outcome, 0);
    /* a win if a child loses for its mover (the fastest), else a loss (the slowest) */
    unsigned win_in = 0xFFFF, lose_in = 0;
    for (int p = 0; p < npits; p++) {
        if (board[p] == 0) continue;
        uint16_t r = record[child_of(board, p)];
        if (r == 0) { fprintf(stderr, "plain_diffusion: a child is unsolved (the potential does not fall)\n"); exit(1); }
        unsigned rem = r >> 2;
        if ((r & 3) == LOSS) { if (rem < win_in) win_in = rem; }
        else if (rem > lose_in) lose_in = rem;
    }
    return win_in != 0xFFFF ? MAKE(WIN, win_in + 1) : MAKE(LOSS, lose_in + 1);
}

/* A zeroed array in transparent huge pages where the system has them: what a Linux with
 * transparent huge pages "always" (most distributions' default) gives any large allocation,
 * asked for here so that the program does not depend on that setting. */
static void *big_zeroed(size_t bytes) {
    size_t huge = (size_t)2 << 20, rounded = (bytes + huge - 1) / huge * huge;
    void *p = aligned_alloc(huge, rounded);
    if (!p) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, rounded, MADV_HUGEPAGE);
#endif
    memset(p, 0, rounded);
    return p;
}

/* The least positive integer weights under which every move lowers the potential. */
static int find_weights(void) {
    for (int p = 0; p < npits; p++) weight[p] = 1;
    for (int changed = 1, rounds = 0; changed; rounds++) {
        if (rounds > 100000) return -1;
        changed = 0;
        for (int p = 0; p < npits; p++)
            for (int a = 1, dealt = 0; a <= 5; a++) {
                if (slots[p][a - 1] >= 0) dealt += weight[slots[p][a - 1]];
                if (a * weight[p] <= dealt) { weight[p] = dealt / a + 1; changed = 1; }
            }
    }
    return 0;
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
    if (find_weights() < 0) { fprintf(stderr, "plain_diffusion: no potential found\n"); return 1; }
    pow6[0] = 1;
    for (int p = 1; p <= npits; p++) pow6[p] = 6 * pow6[p - 1];
    uint64_t total = pow6[npits];
    int levels = 0;
    for (int p = 0; p < npits; p++) levels += 5 * weight[p];
    levels += 1;
    record = big_zeroed(total * sizeof(uint16_t));
    uint32_t *order = big_zeroed(total * sizeof(uint32_t));
    uint64_t *first = calloc(levels + 1, sizeof(uint64_t));
    if (!record || !order || !first) { fprintf(stderr, "plain_diffusion: out of memory\n"); return 1; }
    int board[MAXP];
    for (uint64_t i = 0; i < total; i++) { decode(i, board); first[potential(board) + 1]++; }
    for (int level = 0; level < levels; level++) first[level + 1] += first[level];
    uint64_t *fill = malloc(levels * sizeof(uint64_t));
    if (!fill) { fprintf(stderr, "plain_diffusion: out of memory\n"); return 1; }
    for (int level = 0; level < levels; level++) fill[level] = first[level];
    for (uint64_t i = 0; i < total; i++) { decode(i, board); order[fill[potential(board)]++] = (uint32_t)i; }
    free(fill);
    for (int level = 0; level < levels; level++) {
        int64_t lo = (int64_t)first[level], hi = (int64_t)first[level + 1];
        #pragma omp parallel for schedule(static)
        for (int64_t k = lo; k < hi; k++) record[order[k]] = solve_one(order[k]);
    }
    free(order);
    free(first);
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
