/** The statuses a pet can have: the API's schema and the store both take them from here. */
export const PET_STATUSES = ['available', 'pending', 'sold'] as const;
export type PetStatus = (typeof PET_STATUSES)[number];
