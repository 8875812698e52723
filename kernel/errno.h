/* Error numbers the kernel returns as -E...: Linux's values, so messages and tests read alike. */
#ifndef KERNEL_ERRNO_H
#define KERNEL_ERRNO_H

#define EAGAIN 11	/* try again (a racing change; the caller retries) */
#define ENOMEM 12	/* out of memory */
#define EFAULT 14	/* bad address: no VMA, or one that does not allow the access */
#define EBUSY 16	/* in use (pinned) */
#define EINVAL 22	/* invalid argument */

#endif
