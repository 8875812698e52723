/* Circular doubly linked lists, Linux style: a list_head embedded in each element, the head a sentinel. */
#ifndef KERNEL_LIST_H
#define KERNEL_LIST_H

#include "kernel/compiler.h"
#include "kernel/arch.h"

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name) { &(name), &(name) }

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void __list_add(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	arch_interleave_point();
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert at the head (LIFO use). */
static inline void list_add(struct list_head *n, struct list_head *head)
{
	__list_add(n, head, head->next);
}

/* Insert at the tail (FIFO use). */
static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	__list_add(n, head->prev, head);
}

#define LIST_POISON1 ((struct list_head *)0xdead000000000100ull)
#define LIST_POISON2 ((struct list_head *)0xdead000000000122ull)

/* Unlink; the entry's pointers are poisoned so a second del or a stale walk faults loudly.
 * Both neighbours are read first (Linux's __list_del_entry()): nothing is read twice. */
static inline void list_del(struct list_head *e)
{
	struct list_head *prev = e->prev, *next = e->next;

	arch_interleave_point();
	next->prev = prev;
	prev->next = next;
	e->next = LIST_POISON1;
	e->prev = LIST_POISON2;
}

static inline void list_move(struct list_head *e, struct list_head *head)
{
	list_del(e);
	list_add(e, head);
}

static inline void list_move_tail(struct list_head *e, struct list_head *head)
{
	list_del(e);
	list_add_tail(e, head);
}

static inline bool list_empty(const struct list_head *h)
{
	return READ_ONCE(h->next) == h;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_for_each(pos, head) for (pos = (head)->next; pos != (head); pos = pos->next)
#define list_for_each_entry(pos, head, member)                                   \
	for (pos = list_entry((head)->next, __typeof__(*pos), member);           \
	     &pos->member != (head);                                             \
	     pos = list_entry(pos->member.next, __typeof__(*pos), member))
#define list_for_each_entry_safe(pos, n, head, member)                           \
	for (pos = list_entry((head)->next, __typeof__(*pos), member),           \
	     n = list_entry(pos->member.next, __typeof__(*pos), member);         \
	     &pos->member != (head);                                             \
	     pos = n, n = list_entry(n->member.next, __typeof__(*n), member))

#endif
