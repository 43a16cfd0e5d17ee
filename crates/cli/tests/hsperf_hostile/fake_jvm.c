/* A process that looks like a JVM to pauselab: it maps a library named libjvm.so and,
 * with `serve`, listens on the HotSpot attach socket /tmp/.java_pid<pid> and answers every
 * request with status 0 followed by an endless stream of text.
 *
 * Usage: fake_jvm PATH/libjvm.so [serve [PID]]
 * `serve PID` listens on the socket of another pid instead (an impostor).
 * With FAKE_JVM_LIBJVM=PATH/libjvm.so in the environment, every argument is free: the
 * command line reads like a `java` one (`fake_jvm -Xmx64m -jar app.jar`).
 * Prints "ready" once set up, then runs until killed. */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static void on_sigquit(int sig) { (void)sig; }

static void serve_forever(int pid) {
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "/tmp/.java_pid%d", pid);
    unlink(addr.sun_path);
    int listener = socket(AF_UNIX, SOCK_STREAM, 0);
    if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        chmod(addr.sun_path, 0600) != 0 || listen(listener, 4) != 0) {
        perror("fake_jvm: attach socket");
        exit(1);
    }
    printf("ready\n");
    fflush(stdout);
    static char chunk[65536];
    memset(chunk, 'x', sizeof chunk);
    for (;;) {
        int client = accept(listener, NULL, NULL);
        if (client < 0)
            continue;
        char request[4096];
        if (read(client, request, sizeof request) > 0 && write(client, "0\n", 2) == 2) {
            while (write(client, chunk, sizeof chunk) > 0) {
            }
        }
        close(client);
    }
}

int main(int argc, char **argv) {
    const char *libjvm = getenv("FAKE_JVM_LIBJVM");
    if (!libjvm && argc < 2) {
        fprintf(stderr, "usage: fake_jvm PATH/libjvm.so [serve [PID]]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGQUIT, on_sigquit);
    if (!dlopen(libjvm ? libjvm : argv[1], RTLD_NOW)) {
        fprintf(stderr, "fake_jvm: %s\n", dlerror());
        return 1;
    }
    if (!libjvm && argc > 2 && strcmp(argv[2], "serve") == 0)
        serve_forever(argc > 3 ? atoi(argv[3]) : (int)getpid());
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
