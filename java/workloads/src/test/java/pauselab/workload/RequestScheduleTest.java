package pauselab.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.junit.jupiter.api.Test;

/** The open-loop schedule and its latency accounting, with real time and real sleeps. */
class RequestScheduleTest {
    static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Serves until {@code count} requests are done, on {@code workers} threads. */
    static void serveUntil(RequestSchedule schedule, long count, int workers, java.util.function.LongConsumer body)
            throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            Thread thread = new Thread(() -> schedule.serve(() -> schedule.completed() < count, body));
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) {
            thread.join(30_000);
            assertTrue(!thread.isAlive(), "worker did not stop");
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aStalledRequestDelaysEveryRequestDueDuringTheStall() throws Exception {
        // 200 requests/s, one every 5 ms; request 20 stops its worker for 400 ms, as a
        // safepoint or a throttled period would.
        Recorder recorder = RequestSchedule.newRecorder();
        RequestSchedule schedule = new RequestSchedule(200, System.nanoTime(), recorder);
        serveUntil(schedule, 150, 1, n -> {
            if (n == 20) {
                sleep(400);
            }
        });
        Histogram latencies = recorder.getIntervalHistogram();
        assertEquals(schedule.completed(), latencies.getTotalCount());
        assertTrue(latencies.getMaxValue() >= 400 * MS, "the stalled request itself: " + latencies.getMaxValue());
        // Request 20 + j was due 5j ms after request 20 and could start only when it ended:
        // it waited at least 400 - 5j ms. Timed from when its work began, it would look
        // instant, and the stall would be one slow request among 150.
        long atLeast200ms = latencies.getCountBetweenValues(200 * MS, latencies.getMaxValue());
        assertTrue(atLeast200ms >= 41, "requests delayed 200 ms or more: " + atLeast200ms);
        long atLeast100ms = latencies.getCountBetweenValues(100 * MS, latencies.getMaxValue());
        assertTrue(atLeast100ms >= 61, "requests delayed 100 ms or more: " + atLeast100ms);
        // The queue the worker found when it came back: the requests due during the stall.
        assertTrue(schedule.maxQueued() >= 70, "max queued " + schedule.maxQueued());
    }

    @Test
    void requestsNeverStartBeforeTheyAreDue() throws Exception {
        Recorder recorder = RequestSchedule.newRecorder();
        RequestSchedule schedule = new RequestSchedule(1000, System.nanoTime() + 20 * MS, recorder);
        long[] earlyBy = new long[300];
        serveUntil(schedule, 300, 1, n -> earlyBy[(int) n] = schedule.dueNs(n) - System.nanoTime());
        for (int n = 0; n < earlyBy.length; n++) {
            assertTrue(earlyBy[n] <= 0, "request " + n + " started " + earlyBy[n] + " ns early");
        }
        // 300 requests at 1000/s take at least 299 ms from the schedule's start.
        assertTrue(System.nanoTime() - schedule.dueNs(0) >= 299 * MS);
        assertTrue(schedule.completed() <= schedule.dueBy(System.nanoTime()));
    }

    @Test
    void dueTimesAndCountsAgree() {
        Recorder recorder = RequestSchedule.newRecorder();
        RequestSchedule schedule = new RequestSchedule(3, 1_000, recorder);
        assertEquals(0, schedule.dueBy(999));
        assertEquals(1, schedule.dueBy(1_000));
        assertEquals(1_000 + 333_333_333, schedule.dueNs(1));
        for (long n = 0; n < 100_000; n += 7) {
            long due = schedule.dueNs(n);
            assertEquals(n + 1, schedule.dueBy(due), "at the due time of " + n);
            assertEquals(n, schedule.dueBy(due - 1), "just before the due time of " + n);
        }
        assertThrows(IllegalArgumentException.class, () -> new RequestSchedule(0, 0, RequestSchedule.newRecorder()));
        assertThrows(IllegalArgumentException.class, () -> new RequestSchedule(Double.NaN, 0, RequestSchedule.newRecorder()));
    }

    @Test
    void workersShareTheRequestsAndEachIsServedOnce() throws Exception {
        Recorder recorder = RequestSchedule.newRecorder();
        RequestSchedule schedule = new RequestSchedule(400, System.nanoTime(), recorder);
        Set<Long> served = ConcurrentHashMap.newKeySet();
        // 5 ms of work per request at 400/s: two workers keep up, one alone would not.
        serveUntil(schedule, 200, 3, n -> {
            assertTrue(served.add(n), "request " + n + " served twice");
            sleep(5);
        });
        long completed = schedule.completed();
        assertTrue(completed >= 200, "completed " + completed);
        assertEquals(completed, served.size());
        assertEquals(completed, recorder.getIntervalHistogram().getTotalCount());
        for (long n = 0; n < completed - 3; n++) {
            assertTrue(served.contains(n), "request " + n + " skipped");
        }
    }

    @Test
    void unfinishedRequestsAtTheEndAreCountedWithTheirWait() throws Exception {
        long start = System.nanoTime();
        Recorder recorder = RequestSchedule.newRecorder();
        RequestSchedule schedule = new RequestSchedule(100, start, recorder);
        long[] end = {0};
        Thread worker = new Thread(() -> schedule.serve(() -> schedule.completed() < 6, n -> {
            if (n == 5) {
                sleep(300);
                end[0] = System.nanoTime();
            }
        }));
        worker.start();
        worker.join(30_000);
        // Request 5 was due at 50 ms and ended 300 ms later: requests 6 to 34 or so were due
        // and none was done; the oldest of them, request 6, had waited since 60 ms.
        assertEquals(6, schedule.completed());
        long due = schedule.dueBy(end[0]);
        assertTrue(due >= 35, "due " + due);
        assertEquals(due - 6, schedule.unfinished(end[0]));
        assertEquals(end[0] - schedule.dueNs(6), schedule.oldestWaitingNs(end[0]));
        assertTrue(schedule.oldestWaitingNs(end[0]) >= 290 * MS);
        assertEquals(0, schedule.unfinished(start));
        assertEquals(0, schedule.oldestWaitingNs(start));
    }
}
