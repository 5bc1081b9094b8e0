// Linked with the objects of the lower layers only (with --whole-archive semantics via
// object files): if one of them calls into a higher layer, this fails to link.
int main() { return 0; }
