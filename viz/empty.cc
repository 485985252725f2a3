// Keeps a viz library a real archive while its layer has no sources of its own.
namespace ksim::viz {}
