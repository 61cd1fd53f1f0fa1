/* Starting the programs the daemon runs (end-of-job hooks, smartctl): one way, so that each is
 * alone with what it was given. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "daemon.h"

int spawn_piped(const char *path, char *const argv[], char *const env[], bool stderr_too, pid_t *pid, int *out_fd) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none, all;
        int pipefd[2], r;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        if ((r = posix_spawn_file_actions_init(&fa)) != 0) {
                close(pipefd[0]);
                close(pipefd[1]);
                return -r;
        }
        if ((r = posix_spawnattr_init(&attr)) != 0) {
                posix_spawn_file_actions_destroy(&fa);
                close(pipefd[0]);
                close(pipefd[1]);
                return -r;
        }
        sigemptyset(&none);
        sigfillset(&all);
        r = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
        if (!r)
                r = posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
        if (!r)
                r = stderr_too ? posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO) :
                                 posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        /* Descriptors are O_CLOEXEC throughout the daemon; this holds should one not be. */
        if (!r)
                r = posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
        if (!r)
                r = posix_spawn_file_actions_addchdir_np(&fa, "/");
        if (!r)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                    POSIX_SPAWN_SETSIGDEF);
        if (!r)
                r = posix_spawnattr_setpgroup(&attr, 0);
        if (!r)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (!r)
                r = posix_spawnattr_setsigdefault(&attr, &all);
        if (!r)
                r = posix_spawn(pid, path, &fa, &attr, argv, env);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
        close(pipefd[1]);
        if (r != 0) {
                close(pipefd[0]);
                return -r;
        }
        *out_fd = pipefd[0];
        return 0;
}
