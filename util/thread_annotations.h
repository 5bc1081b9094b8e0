// Clang thread-safety annotations (-Wthread-safety); empty under other compilers.
#pragma once

#if defined(__clang__)
#define SHALE_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define SHALE_THREAD_ANNOTATION(x)
#endif

#define GUARDED_BY(x) SHALE_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) SHALE_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_AFTER(...) SHALE_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define ACQUIRED_BEFORE(...) SHALE_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define REQUIRES(...) SHALE_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) SHALE_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ACQUIRE(...) SHALE_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) SHALE_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) SHALE_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) SHALE_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) SHALE_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define CAPABILITY(x) SHALE_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY SHALE_THREAD_ANNOTATION(scoped_lockable)
#define RETURN_CAPABILITY(x) SHALE_THREAD_ANNOTATION(lock_returned(x))
#define ASSERT_CAPABILITY(...) SHALE_THREAD_ANNOTATION(assert_capability(__VA_ARGS__))
#define NO_THREAD_SAFETY_ANALYSIS SHALE_THREAD_ANNOTATION(no_thread_safety_analysis)
