/*
 * chip.c - placeholder implementation of chip.h until the owning module lands.
 */
#include "planner/chip.h"

size_t chip_count(void)
{
    return 0;
}

const struct chip *chip_at(size_t i)
{
    (void)i;
    return NULL;
}

const struct chip *chip_find(const char *name)
{
    (void)name;
    return NULL;
}

const struct chip *chip_default(void)
{
    return NULL;
}

const char *chip_names(void)
{
    return "";
}
