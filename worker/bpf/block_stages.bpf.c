// A request whose completion the kernel does not report is counted when its slot is taken by the
// next dispatch (or, by user space, when tracing stops): on 6.18 under CPU load, block_rq_complete
// does not fire for a few requests in a thousand runs (every consumer of the tracepoint misses
// them alike: checked with bpftrace beside this program), and without this count they would
// vanish from the totals.
//
// The kernel does not run a program inside itself: an event on a CPU where the same program is
// already running (a completion interrupt in the middle of another completion) is missed and
// counted in the program's recursion_misses, which user space reports. Tracepoints run their
// programs with preemption disabled, so the completion program, the only writer of the stages,
// updates this CPU's copy with plain adds; counters several programs write (merges, unseen
// completions) are added to atomically, since one may interrupt another. A request's stages and
// size are recorded together at its completion, so they always count the same requests.
//
// Block-layer stage latencies in the kernel (worker/block_stage_tracer.h loads it): for each
// request on the traced devices, the time from its first bio's queueing (btt's Q) to its issue
// to the driver (D) and from there to its completion (C), recorded straight into histograms
// with iofleet's bucket layout (histogram/latency_histogram.h), so user space reads a few
// hundred counters per interval instead of four events per IO.
//
// Kernel structures are named by field with CO-RE (preserve_access_index): libbpf relocates
// each access to this kernel's layout at load time, so one object serves 6.1 and 6.18 alike.
// Only the fields read here are declared.

typedef unsigned char __u8;
typedef unsigned short __u16;
typedef unsigned int __u32;
typedef unsigned long long __u64;
typedef int __s32;
typedef long long __s64;
typedef __u32 __be32;
typedef __u16 __be16;
typedef __u32 __wsum;
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __u64 sector_t;
typedef __u32 dev_t;
typedef __u32 blk_opf_t;
typedef __u8 blk_status_t;

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

struct gendisk {
  int major;
  int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
  struct gendisk *disk;
} __attribute__((preserve_access_index));

struct block_device {
  struct gendisk *bd_disk;
} __attribute__((preserve_access_index));

struct bio {
  struct block_device *bi_bdev;
  blk_opf_t bi_opf;
} __attribute__((preserve_access_index));

struct blk_mq_hw_ctx {
  unsigned int queue_num;
} __attribute__((preserve_access_index));

struct request {
  struct request_queue *q;
  struct blk_mq_hw_ctx *mq_hctx;
  int tag;  // the driver tag: unique among the hardware queue's requests in flight
  blk_opf_t cmd_flags;
  unsigned int __data_len;
  sector_t __sector;
  struct bio *bio;
  u64 start_time_ns;  // the block layer's own: when the request was made for its first bio
} __attribute__((preserve_access_index));

// Layout shared with worker/block_stage_tracer.cc.
#define MAX_DEVICES 8
#define DIRECTIONS 4  // read, write, trim, flush
#define STAGES 4      // Q2D, D2C, Q2C (ns), request size (bytes)
#define STAGE_Q2D 0
#define STAGE_D2C 1
#define STAGE_Q2C 2
#define STAGE_SIZE 3
// Buckets kept per series: the layout's first 2048 (values up to 2^37 - 1: 137 s, 128 GiB); a
// larger value counts in the last bucket (user space places it at the series' maximum).
#define BUCKETS 2048

// Set by user space before loading: the whole-disk devices to trace, in the kernel's dev_t
// encoding (major << 20 | minor).
const volatile u32 devices[MAX_DEVICES] = {};
const volatile u32 device_count = 0;
// Q from the request's own timestamp (rq->start_time_ns, set when the device keeps IO
// statistics: iostats=1, the default) instead of from each bio's queueing: no per-bio map
// update, which is most of the cost. The bio programs are then not loaded at all.
const volatile u32 queue_time_from_request = 1;
// Where each device's in-flight requests sit in `in_flight`: device d's request with driver tag
// t on hardware queue h at device_first[d] + h * device_tags[d] + t (user space reads the
// queues and tag depths from sysfs). A request outside its range goes to the `in_device` hash.
const volatile u32 device_first[MAX_DEVICES] = {};
const volatile u32 device_queues[MAX_DEVICES] = {};
const volatile u32 device_tags[MAX_DEVICES] = {};

struct series_stats {
  u64 count, sum, min, max;
};
struct direction_counts {
  u64 sequential;   // issued requests that start where the previous one on the device ended
  u64 merged_bios;  // bios merged into a request already queued (back or front)
  u64 unqueued;     // issued requests whose Q was not seen (queued before tracing began, flushes)
  u64 undispatched;  // completions whose dispatch was not seen (dispatched before tracing began)
  u64 completion_unseen;  // dispatched requests whose completion the kernel did not report
};
struct issued {
  u64 issue_ns;
  u64 queue_ns;  // 0: not seen
  u64 request;   // in_flight: whose slot this is (0: free)
  u64 bytes;     // the request's size when dispatched
  u32 sequential;  // 1: it began where the previous dispatch of its direction ended
  u16 device;      // slot in `devices`
  u16 direction;
  // To 128 bytes: slots of neighbouring tags, dispatched and completed on different CPUs at
  // once, then never share a cache line, whatever the array's alignment.
  u64 padding[11];
};

// The first bio's queue time, by bio, until its request is issued (or it merges into one):
// only without queue_time_from_request. LRU: a bio that never becomes a request ages out.
struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, u64);
  __type(value, u64);
} queued SEC(".maps");

// Issued requests, by request, until they complete (a plain preallocated hash: cheaper than an
// LRU one; full, a request goes untimed rather than evicting another).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, u64);
  __type(value, struct issued);
} in_device SEC(".maps");

// Issued requests by driver tag until they complete: an array slot costs a fraction of a hash
// update. Sized by user space.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, u32);
  __type(value, struct issued);
} in_flight SEC(".maps");

// Bucket counts, per CPU, dense: key = ((device * DIRECTIONS + direction) * STAGES + stage) *
// BUCKETS + bucket. User space sizes it to the devices traced before loading.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MAX_DEVICES * DIRECTIONS * STAGES * BUCKETS);
  __type(key, u32);
  __type(value, u64);
} buckets SEC(".maps");

// Exact count, sum and extremes per series (device, direction, stage), per CPU.
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MAX_DEVICES * DIRECTIONS * STAGES);
  __type(key, u32);
  __type(value, struct series_stats);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, MAX_DEVICES * DIRECTIONS);
  __type(key, u32);
  __type(value, struct direction_counts);
} counts SEC(".maps");

// Where the last issued request of (device, direction) ended, in sectors.
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, MAX_DEVICES * DIRECTIONS);
  __type(key, u32);
  __type(value, u64);
} next_sector SEC(".maps");

static __always_inline int device_slot(struct gendisk *disk) {
  if (!disk) return -1;
  const u32 dev = ((u32)disk->major << 20) | (u32)disk->first_minor;
  for (int i = 0; i < MAX_DEVICES; ++i) {
    if (i >= device_count) return -1;
    if (devices[i] == dev) return i;
  }
  return -1;
}

// REQ_OP_* (the low 8 bits of the op flags) to the tracer's direction, -1 for the others.
static __always_inline int direction_of(blk_opf_t opf) {
  switch (opf & 0xff) {
    case 0: return 0;  // REQ_OP_READ
    case 1: return 1;  // REQ_OP_WRITE
    case 3: return 2;  // REQ_OP_DISCARD
    case 5: return 2;  // REQ_OP_SECURE_ERASE
    case 2: return 3;  // REQ_OP_FLUSH
    default: return -1;
  }
}

// HistogramLayout::BucketIndex: exact below 128, then 64 buckets per power of two.
static __always_inline u32 bucket_index(u64 v) {
  if (v < 128) return (u32)v;
  u32 msb = 0;
  u64 x = v;
  if (x >> 32) { x >>= 32; msb += 32; }
  if (x >> 16) { x >>= 16; msb += 16; }
  if (x >> 8) { x >>= 8; msb += 8; }
  if (x >> 4) { x >>= 4; msb += 4; }
  if (x >> 2) { x >>= 2; msb += 2; }
  if (x >> 1) { msb += 1; }
  const u32 shift = msb - 6;
  return (shift << 6) + (u32)(v >> shift);
}

static __always_inline void record(int slot, int direction, int stage, u64 value) {
  const u32 series = ((u32)slot * DIRECTIONS + (u32)direction) * STAGES + (u32)stage;
  struct series_stats *s = bpf_map_lookup_elem(&stats, &series);
  // Only the completion program writes here, never nested on one CPU (see the top).
  if (s) {
    if (s->count == 0 || value < s->min) s->min = value;
    if (value > s->max) s->max = value;
    s->count += 1;
    s->sum += value;
  }
  u32 bucket = bucket_index(value);
  if (bucket >= BUCKETS) bucket = BUCKETS - 1;
  const u32 key = series * BUCKETS + bucket;
  u64 *n = bpf_map_lookup_elem(&buckets, &key);
  if (n) *n += 1;
}

static __always_inline struct direction_counts *counts_of(int slot, int direction) {
  const u32 key = (u32)slot * DIRECTIONS + (u32)direction;
  return bpf_map_lookup_elem(&counts, &key);
}

SEC("tp_btf/block_bio_queue")
int BPF_PROG(iofleet_bio_queue, struct bio *bio) {
  if (device_slot(bio->bi_bdev->bd_disk) < 0) return 0;
  const u64 key = (u64)bio;
  const u64 now = bpf_ktime_get_ns();
  bpf_map_update_elem(&queued, &key, &now, BPF_ANY);
  return 0;
}

// A bio merged into a request already queued: that request's Q is its first bio's.
static __always_inline void merged(struct bio *bio) {
  const int slot = device_slot(bio->bi_bdev->bd_disk);
  if (slot < 0) return;
  const u64 key = (u64)bio;
  bpf_map_delete_elem(&queued, &key);
  const int direction = direction_of(bio->bi_opf);
  if (direction < 0) return;
  struct direction_counts *c = counts_of(slot, direction);
  if (c) __sync_fetch_and_add(&c->merged_bios, 1);
}

SEC("tp_btf/block_bio_backmerge")
int BPF_PROG(iofleet_bio_backmerge, struct bio *bio) {
  merged(bio);
  return 0;
}

SEC("tp_btf/block_bio_frontmerge")
int BPF_PROG(iofleet_bio_frontmerge, struct bio *bio) {
  merged(bio);
  return 0;
}

// The request's slot in in_flight, or null when its tag is outside the device's range.
static __always_inline struct issued *in_flight_slot(int device, struct request *rq) {
  if (device < 0 || device >= MAX_DEVICES) return 0;
  const int tag = rq->tag;
  const u32 queue = rq->mq_hctx ? rq->mq_hctx->queue_num : 0;
  if (tag < 0 || (u32)tag >= device_tags[device] || queue >= device_queues[device]) return 0;
  const u32 index = device_first[device] + queue * device_tags[device] + (u32)tag;
  return bpf_map_lookup_elem(&in_flight, &index);
}

// A request merged into another before dispatch (the scheduler's or the plug's request merges):
// its first bio now travels in the other request (bios merged into it were counted already).
SEC("tp_btf/block_rq_merge")
int BPF_PROG(iofleet_rq_merge, struct request *rq) {
  const int slot = device_slot(rq->q->disk);
  if (slot < 0) return 0;
  const int direction = direction_of(rq->cmd_flags);
  if (direction < 0) return 0;
  struct direction_counts *c = counts_of(slot, direction);
  if (c) __sync_fetch_and_add(&c->merged_bios, 1);
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(iofleet_rq_issue, struct request *rq) {
  const int slot = device_slot(rq->q->disk);
  if (slot < 0) return 0;
  const int slot_index = slot;
  const int direction = direction_of(rq->cmd_flags);
  if (direction < 0) return 0;
  struct issued issued = {.issue_ns = bpf_ktime_get_ns(), .queue_ns = 0};
  struct bio *first = rq->bio;
  if (queue_time_from_request) {
    const u64 made = rq->start_time_ns;
    if (made != 0 && made <= issued.issue_ns) issued.queue_ns = made;
  } else if (first) {
    const u64 bio_key = (u64)first;
    u64 *queue_ns = bpf_map_lookup_elem(&queued, &bio_key);
    if (queue_ns) {
      issued.queue_ns = *queue_ns;
      bpf_map_delete_elem(&queued, &bio_key);
    }
  }
  const u64 rq_key = (u64)rq;
  issued.request = rq_key;
  issued.bytes = rq->__data_len;
  issued.device = (u16)slot;
  issued.direction = (u16)direction;
  const u64 sector = rq->__sector;
  const u32 where = (u32)slot * DIRECTIONS + (u32)direction;
  u64 *next = bpf_map_lookup_elem(&next_sector, &where);
  if (next) {
    issued.sequential = *next == sector && issued.bytes > 0;
    *next = sector + (issued.bytes >> 9);
  }
  // Everything is recorded at completion, from what the last dispatch kept here: a request
  // dispatched twice (requeued) counts once, and one still in the device when tracing stops
  // not at all — so every stage and the sizes count the same requests.
  struct issued *tracked = in_flight_slot(slot_index, rq);
  struct issued *before = tracked ? tracked : bpf_map_lookup_elem(&in_device, &rq_key);
  if (before && before->request != 0) {
    // The tag's (or the request's) previous dispatch never completed as far as the tracepoint
    // said (a requeue clears its slot first, so this is not one).
    struct direction_counts *c = counts_of(before->device, before->direction);
    if (c) __sync_fetch_and_add(&c->completion_unseen, 1);
  }
  if (tracked) {
    *tracked = issued;
  } else {
    bpf_map_update_elem(&in_device, &rq_key, &issued, BPF_ANY);
  }
  return 0;
}

// A dispatched request put back (the driver was busy) is dispatched again later and timed from
// then. With a scheduler its driver tag is already given back here (rq->tag is -1), so its slot is
// found by scanning the hardware queue's slots — requeues are rare.
struct requeue_scan {
  u64 request;
  u32 first;
};

static long clear_requeued(u64 index, void *context) {
  struct requeue_scan *scan = context;
  const u32 key = scan->first + (u32)index;
  struct issued *tracked = bpf_map_lookup_elem(&in_flight, &key);
  if (tracked && tracked->request == scan->request) {
    tracked->request = 0;
    return 1;
  }
  return 0;
}

SEC("tp_btf/block_rq_requeue")
int BPF_PROG(iofleet_rq_requeue, struct request *rq) {
  const int slot = device_slot(rq->q->disk);
  if (slot < 0 || slot >= MAX_DEVICES) return 0;
  const u64 rq_key = (u64)rq;
  bpf_map_delete_elem(&in_device, &rq_key);
  const u32 queue = rq->mq_hctx ? rq->mq_hctx->queue_num : 0;
  if (queue >= device_queues[slot]) return 0;
  struct requeue_scan scan = {.request = rq_key, .first = device_first[slot] + queue * device_tags[slot]};
  bpf_loop(device_tags[slot], clear_requeued, &scan, 0);
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(iofleet_rq_complete, struct request *rq, blk_status_t error, unsigned int nr_bytes) {
  const int slot = device_slot(rq->q->disk);
  if (slot < 0) return 0;
  const u64 rq_key = (u64)rq;
  struct issued *issued = in_flight_slot(slot, rq);
  const int in_array = issued && issued->request == rq_key;
  if (!in_array) issued = bpf_map_lookup_elem(&in_device, &rq_key);
  if (!issued) {
    // Dispatched before tracing began: counted, not timed.
    const int unseen = direction_of(rq->cmd_flags);
    struct direction_counts *u = unseen >= 0 ? counts_of(slot, unseen) : 0;
    if (u) u->undispatched += 1;
    return 0;
  }
  const u64 issue_ns = issued->issue_ns, queue_ns = issued->queue_ns, bytes = issued->bytes;
  const u32 sequential = issued->sequential;
  if (in_array) {
    issued->request = 0;
  } else {
    bpf_map_delete_elem(&in_device, &rq_key);
  }
  const int direction = direction_of(rq->cmd_flags);
  if (direction < 0) return 0;
  const u64 now = bpf_ktime_get_ns();
  record(slot, direction, STAGE_D2C, now - issue_ns);
  record(slot, direction, STAGE_SIZE, bytes);
  struct direction_counts *c = counts_of(slot, direction);
  if (c && sequential) c->sequential += 1;
  if (queue_ns != 0) {
    record(slot, direction, STAGE_Q2D, issue_ns - queue_ns);
    record(slot, direction, STAGE_Q2C, now - queue_ns);
  } else if (c) {
    c->unqueued += 1;
  }
  return 0;
}

char LICENSE[] SEC("license") = "GPL";
