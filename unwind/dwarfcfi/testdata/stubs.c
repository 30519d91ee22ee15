/* The callees progs.c needs, and an entry point, to link an image. */
void use(void *p, long n) { (void)p; (void)n; }
long ext(long v) { return v + 1; }
double extd(double v) { return v * 2; }
long vla(int); long with_alloca(int);
void start(void) { vla(3); with_alloca(4); for(;;); }
