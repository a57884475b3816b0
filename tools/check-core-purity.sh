#!/bin/sh
# core/ purity check: libc only, no clock, no randomness, no I/O.
# Fails (exit 1) when any core/*.c or core/*.h
#  - includes a MariaDB/MySQL, FastCGI, json-c, curl, libsodium or OpenSSL
#    header, or a clock/OS header (time.h, unistd.h, fcntl.h, sys/*, ...);
#  - calls time(), the rand() family, a clock, getenv/exit, or any stdio or
#    POSIX I/O function (snprintf into a buffer is allowed).
# Comments and string literals are stripped before matching.
# Usage: tools/check-core-purity.sh [DIR]   (default: core)
set -eu
cd "$(dirname "$0")/.."
dir=${1:-core}

exec perl -e '
use strict; use warnings;
my $bad_inc = qr{^\s*\#\s*include\s*[<"]\s*(?:
	mysql|mariadb|my_global|errmsg\.h|
	fcgi|fastcgi|
	json-c/|json\.h|json_object|
	curl/|
	sodium|openssl/|
	time\.h|sys/|unistd\.h|fcntl\.h|dirent\.h|pthread\.h|signal\.h|
	syslog\.h|poll\.h|netdb\.h|arpa/|netinet/|dlfcn\.h|termios\.h
)}x;
my @calls = qw(
	time clock clock_gettime gettimeofday timespec_get ftime localtime gmtime
	mktime timegm strftime
	rand srand rand_r random srandom drand48 lrand48 mrand48 arc4random
	arc4random_buf getrandom getentropy randombytes_buf
	fopen freopen fdopen fclose fread fwrite fflush fseek ftell rewind
	fgetc fgets fputc fputs getc putc getchar putchar gets puts
	printf fprintf vprintf vfprintf dprintf vdprintf perror
	scanf fscanf vscanf vfscanf tmpfile tmpnam remove rename setvbuf
	open openat creat read write pread pwrite readv writev close lseek
	unlink mkdir rmdir opendir readdir stat fstat lstat mmap munmap
	socket connect bind listen accept send recv sendto recvfrom
	popen pclose system fork exec execv execve execvp getenv setenv
	syslog exit _exit abort sleep usleep nanosleep
);
my $call_re = join("|", @calls);
my $fail = 0;
my @files = (glob("$ARGV[0]/*.c"), glob("$ARGV[0]/*.h"));
die "no files under $ARGV[0]\n" unless @files;
for my $f (@files) {
	open(my $fh, "<", $f) or die "$f: $!\n";
	local $/; my $src = <$fh>; close $fh;
	# Includes are checked on the raw text (line by line).
	my $n = 0;
	for my $line (split /\n/, $src) {
		$n++;
		if ($line =~ $bad_inc) {
			print "$f:$n: forbidden include: $line\n"; $fail = 1;
		}
	}
	# Strip comments and string/char literals, keeping line breaks.
	$src =~ s{ (/\*.*?\*/) | (//[^\n]*) | ("(?:\\.|[^"\\\n])*") | (\x27(?:\\.|[^\x27\\\n])*\x27) }
	    { my $m = $&; $m =~ s/[^\n]//g; $m }gsex;
	$n = 0;
	for my $line (split /\n/, $src) {
		$n++;
		next if $line =~ /^\s*#/;
		while ($line =~ /(?:^|[^.>\w])($call_re)\s*\(/g) {
			print "$f:$n: forbidden call $1()\n"; $fail = 1;
		}
	}
}
print "core purity: ok (" . scalar(@files) . " files)\n" unless $fail;
exit $fail;
' "$dir"
