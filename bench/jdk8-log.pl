#!/usr/bin/perl
# Repeats JDK 6-8 GC logs into one continuous log of about TARGET_MB megabytes: every copy's
# uptime stamps (`12.356: `) and date stamps (`2015-05-13T13:28:51.504-0400: `) are shifted
# so that the result reads as one JVM run whose stamps only go forward.
# Usage: jdk8-log.pl TARGET_MB FILE... > big.log
use strict;
use warnings;
use Time::Local qw(timegm);

my ($target_mb, @files) = @ARGV;
my $target = $target_mb * 1_000_000;
my @units;
for my $file (@files) {
    open(my $fh, '<', $file) or die "$file: $!";
    local $/;
    my $text = <$fh>;
    # A sample that ends without a newline would run into the next copy's first line.
    $text .= "\n" unless $text =~ /\n\z/;
    # A JVM in a locale with a decimal comma writes `55041,359: ` (GCViewer's samples have some).
    my @uptimes = map { tr/,/./r } $text =~ /(?<![\d.,])(\d+[.,]\d{3}): /g;
    my ($lo, $hi) = (1e18, 0);
    for (@uptimes) { $lo = $_ if $_ < $lo; $hi = $_ if $_ > $hi }
    ($lo, $hi) = (0, 0) unless @uptimes;
    my ($date) = $text =~ /(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d{3}[+-]\d{4}: /;
    push @units, { text => $text, lo => $lo, span => $hi - $lo + 1, date => $date ? epoch($date) : undef };
}
my ($written, $cursor, $base) = (0, 10, 1_600_000_000);
while ($written < $target) {
    for my $u (@units) {
        my $shift = $cursor - $u->{lo};
        my $text = $u->{text};
        if (defined $u->{date}) {
            # A date stamp without an uptime after it moves as the unit's first date does.
            my $dshift = $base + $cursor - $u->{lo} - $u->{date};
            my %cache;
            $text =~ s{(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d{3})([+-]\d{4}): (?!\d+[.,]\d{3}: )}
                {($cache{$1} //= stamp(epoch($1) + $dshift)) . "$2+0000: "}ge;
        }
        # An uptime, and the date stamp before it, which then says the same moment: the
        # samples' own dates do not always follow their uptimes (excerpts of several days).
        $text =~ s{(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}: )?(?<![\d.,])(\d+)([.,])(\d{3}): }
            {my ($date, $sep, $up) = ($1, $3, "$2.$4" + $shift);
             (defined $date ? date_at($base + $up) : '') . (sprintf('%.3f: ', $up) =~ s/\./$sep/r)}ge;
        print $text;
        $written += length $text;
        $cursor += $u->{span};
    }
}

sub epoch {
    my ($y, $mo, $d, $h, $mi, $s) = $_[0] =~ /(\d+)-(\d+)-(\d+)T(\d+):(\d+):(\d+)/;
    return timegm($s, $mi, $h, $d, $mo - 1, $y);
}

# The date stamp (`2020-09-13T12:26:37.504+0000: `) of `seconds` since the epoch.
sub date_at {
    my ($seconds) = @_;
    my $ms = int(($seconds - int $seconds) * 1000 + 0.5);
    my $whole = int $seconds;
    ($whole, $ms) = ($whole + 1, 0) if $ms == 1000;
    return stamp($whole) . sprintf('.%03d+0000: ', $ms);
}

sub stamp {
    my @t = gmtime(int $_[0]);
    return sprintf('%04d-%02d-%02dT%02d:%02d:%02d', $t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0]);
}
